import { destinationType, LISTEN_SCHEME } from "@herald/contracts/destinations";

/**
 * What Herald refuses of a request a transformation returned, beyond what readResult checks of
 * its shape: the sender fails the attempt with it (`transformation_error`) before any request,
 * and the gateway's try-it answers with it, so a preview says what a delivery would. Only what
 * the endpoint itself decides is here; the destination check of a new URL (no private
 * addresses) needs the sender's DNS and settings and stays there.
 */

/**
 * Why `request` may not be sent for the endpoint at `endpointUrl` (as stored, the URL its
 * transformation was given: the string it saw is what an unchanged `url` equals), null when it
 * may:
 * - a new method or URL where there is none to change (a queue, a stream, a topic, a bucket, a
 *   `herald listen` socket);
 * - credentials in a new URL: they go in a header, never in the URL (nor the attempt's record);
 * - with OAuth2, a URL on another origin: the endpoint's token goes only where it was set for.
 */
export function refusal(
  endpointUrl: string | URL,
  oauth2: boolean,
  request: { method: string; url: string },
): string | null {
  const stored = typeof endpointUrl === "string" ? endpointUrl : endpointUrl.href;
  const target = typeof endpointUrl === "string" ? new URL(endpointUrl) : endpointUrl;
  // Herald's own request is a POST to the stored URL (webhookInput): anything else is a change.
  const changed = [
    ...(request.method !== "POST" ? ["method"] : []),
    ...(request.url !== stored ? ["url"] : []),
  ];
  if (!changed.length) return null;
  const type = destinationType(target);
  const fixed =
    type && type !== "http"
      ? `a ${type} endpoint`
      : target.protocol === LISTEN_SCHEME
        ? "a `herald listen` endpoint"
        : null;
  if (fixed)
    return `the transformation set \`${changed.join("` and `")}\`, which ${fixed} has not: it may change only \`payload\` and \`headers\``;
  if (request.url === stored) return null;
  const url = new URL(request.url);
  if (url.username || url.password)
    return "the transformation set a `url` with credentials in it; send them in a header instead";
  if (oauth2 && url.origin !== target.origin)
    return "the transformation moved the request to another origin, where the endpoint's OAuth2 token may not go";
  return null;
}

import type { IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";

/** A response as an attempt keeps it: the status, the headers, and the start of the body. */
export type BoundedResponse = { statusCode: number; headers: IncomingHttpHeaders; body: string };

/**
 * Reads a request's response (a got stream: `response`, then the body) keeping the first
 * `limit` bytes of its body as UTF-8. Reaching the limit resolves at once and destroys the
 * stream: a server's endless body is never read to its end. An error after the status came
 * resolves with the body read so far, since the status is the answer; before it, rejects.
 */
export function readBounded(stream: Readable, limit: number): Promise<BoundedResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let response: { statusCode: number; headers: IncomingHttpHeaders } | null = null;
    let done = false;
    const finish = () => {
      if (done || !response) return;
      done = true;
      resolve({ ...response, body: Buffer.concat(chunks).subarray(0, limit).toString("utf8") });
    };
    stream.on("response", (r: { statusCode: number; headers: IncomingHttpHeaders }) => {
      response = { statusCode: r.statusCode, headers: r.headers };
    });
    stream.on("data", (chunk: Buffer) => {
      if (size < limit) chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) {
        finish();
        stream.destroy();
      }
    });
    stream.on("end", finish);
    stream.on("error", (err) => {
      // The status came; a body cut short does not change what it says.
      if (response) finish();
      else if (!done) {
        done = true;
        reject(err);
      }
    });
  });
}

import { typeLabel, urlType } from "./destinationUrl.ts";

/**
 * An endpoint's type as a small label, read from its URL's scheme: "Webhook (HTTP)", "RabbitMQ",
 * "NATS", "Redis Streams", "MQTT" or "S3". Nothing for a URL that names none.
 */
export function DestinationLabel({ url }: { url: string }) {
  const type = urlType(url);
  if (!type) return null;
  return (
    <span className="badge badge-type" data-type={type}>
      {typeLabel(type)}
    </span>
  );
}

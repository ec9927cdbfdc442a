import { type RefObject, useId } from "react";
import {
  type DestinationField,
  type DestinationKind,
  defaultPort,
  type DestinationFields as Fields,
  schemeOf,
  typeLabel,
} from "../ui/destinationUrl.ts";
import { Field } from "../ui/Field.tsx";

/**
 * A destination's own fields, one small form per type (the URL is built from them, in
 * ui/destinationUrl.ts): where its server is, where on it each event goes, and its
 * credentials, which are write-only: saved ones are never shown, and empty boxes keep them.
 */
export function DestinationFields({
  type,
  values,
  onChange,
  errorAt,
  refs,
}: {
  type: DestinationKind;
  values: Fields;
  onChange: (change: Partial<Fields>) => void;
  /** The form's problem with a field (its own check, before sending), or null. */
  errorAt: (field: DestinationField) => string | null;
  /** Where focus goes for a problem, by field. */
  refs: RefObject<Partial<Record<DestinationField, HTMLElement | null>>>;
}) {
  const hintId = useId();
  const text = (
    field: keyof Fields,
    label: string,
    hint: string | null,
    extra: { placeholder?: string; inputMode?: "numeric" | "url"; required?: boolean } = {},
  ) => (
    <Field label={label} hint={hint ?? undefined} error={errorAt(field)}>
      {(props) => (
        <input
          {...props}
          ref={(el) => {
            refs.current[field] = el;
          }}
          spellCheck={false}
          autoComplete="off"
          {...extra}
          value={String(values[field])}
          onChange={(e) => onChange({ [field]: e.target.value })}
        />
      )}
    </Field>
  );
  const s3 = type === "s3";
  const port = defaultPort(type, values.tls);
  return (
    <fieldset className="destination-fields" aria-describedby={hintId}>
      <legend>{typeLabel(type)} destination</legend>
      <p id={hintId} className="hint fieldset-hint">
        {HINTS[type]}
      </p>
      {s3 ? (
        <>
          {text("bucket", "Bucket", "3 to 63 of a-z, 0-9, dots and dashes.", { required: true })}
          {text("prefix", "Key prefix", "Optional. Each event is stored as <prefix><event id>.json.", {
            placeholder: "webhooks/",
          })}
          {text(
            "endpoint",
            "Server URL",
            "For an S3-compatible server (MinIO and the like): its http or https URL. Leave empty for AWS S3.",
            { placeholder: "https://minio.example.com:9000", inputMode: "url" },
          )}
          {text("region", "Region", "Leave empty for us-east-1.", { placeholder: "us-east-1" })}
        </>
      ) : (
        <>
          {text("host", "Host", "The server's name or address.", { required: true })}
          {text("port", "Port", `Leave empty for ${port}.`, {
            inputMode: "numeric",
            placeholder: String(port),
          })}
          <label className="checkbox destination-tls">
            <input
              type="checkbox"
              checked={values.tls}
              onChange={(e) => onChange({ tls: e.target.checked })}
            />{" "}
            Connect over TLS ({schemeOf(type, true)}://)
          </label>
        </>
      )}
      {type === "amqp" ? (
        <>
          {text("vhost", "Virtual host", "Leave empty for the default, /.", { placeholder: "/" })}
          {text("exchange", "Exchange", "Leave empty for the default exchange, which routes by queue name.")}
          {text(
            "routingKey",
            "Routing key",
            "With the default exchange, the queue's name. An exchange, a routing key, or both.",
          )}
        </>
      ) : null}
      {type === "nats"
        ? text(
            "subject",
            "Subject",
            "A plain subject, no wildcards. Published to JetStream when a stream takes it, else to core NATS.",
            { required: true, placeholder: "orders.events" },
          )
        : null}
      {type === "redis" ? (
        <>
          {text("db", "Database", "0 to 15. Leave empty for 0.", { inputMode: "numeric", placeholder: "0" })}
          {text("stream", "Stream", "The stream's key: each event is one entry (XADD).", { required: true })}
          {text(
            "maxlen",
            "Maximum length",
            "Optional: the stream is trimmed to about this many entries. Leave empty to keep every entry.",
            { inputMode: "numeric" },
          )}
        </>
      ) : null}
      {type === "mqtt" ? (
        <>
          {text("topic", "Topic", "A topic name to publish to, no wildcards (+ #).", {
            required: true,
            placeholder: "herald/orders",
          })}
          <Field label="QoS" hint="1: at least once (PUBACK). 2: exactly once." error={errorAt("qos")}>
            {(props) => (
              <select
                {...props}
                value={values.qos}
                onChange={(e) => onChange({ qos: e.target.value === "2" ? "2" : "1" })}
              >
                <option value="1">1: at least once</option>
                <option value="2">2: exactly once</option>
              </select>
            )}
          </Field>
        </>
      ) : null}
      <Credentials s3={s3} values={values} onChange={onChange} errorAt={errorAt} refs={refs} />
    </fieldset>
  );
}

const HINTS: Record<DestinationKind, string> = {
  amqp: "Each event is published to the exchange, persistent, with the webhook headers as message headers; the broker confirms it.",
  nats: "Each event is published to the subject, with the webhook headers as NATS headers.",
  redis: "Each event is added to the stream as one entry: the webhook headers as fields, then the body.",
  mqtt: "Each event is published over MQTT 5 with the webhook headers as user properties.",
  s3: "Each event is stored as one JSON object, with the webhook headers as its metadata.",
};

/** The URL's user info: a user name and password (S3: an access key), write-only. */
function Credentials({
  s3,
  values,
  onChange,
  errorAt,
  refs,
}: {
  s3: boolean;
  values: Fields;
  onChange: (change: Partial<Fields>) => void;
  errorAt: (field: DestinationField) => string | null;
  refs: RefObject<Partial<Record<DestinationField, HTMLElement | null>>>;
}) {
  const hintId = useId();
  const saved = values.saved && !values.removeSaved;
  const hint = saved
    ? "Saved — leave both empty to keep them; what you type replaces them."
    : values.saved
      ? "The saved credentials will be removed."
      : s3
        ? "Optional: the access key Herald signs its requests with. Write-only: never shown again once saved."
        : "Optional. Write-only: never shown again once saved.";
  const box = (field: "username" | "password", label: string, secret: boolean) => (
    <Field label={label} error={errorAt(field)}>
      {(props) => (
        <input
          {...props}
          ref={(el) => {
            refs.current[field] = el;
          }}
          type={secret ? "password" : "text"}
          autoComplete={secret ? "new-password" : "off"}
          spellCheck={false}
          disabled={values.saved && values.removeSaved}
          placeholder={saved ? "saved" : undefined}
          value={values[field]}
          onChange={(e) => onChange({ [field]: e.target.value })}
        />
      )}
    </Field>
  );
  return (
    <fieldset aria-describedby={hintId}>
      <legend>Credentials</legend>
      <p id={hintId} className="hint fieldset-hint">
        {hint}
      </p>
      {box("username", s3 ? "Access key ID" : "User name", false)}
      {box("password", s3 ? "Secret access key" : "Password", true)}
      {values.saved ? (
        <label className="checkbox">
          <input
            type="checkbox"
            checked={values.removeSaved}
            onChange={(e) => onChange({ removeSaved: e.target.checked, username: "", password: "" })}
          />{" "}
          Remove the saved credentials
        </label>
      ) : null}
    </fieldset>
  );
}

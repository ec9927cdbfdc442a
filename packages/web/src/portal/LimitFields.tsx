import type { Endpoint } from "@herald/sdk/types";
import { type RefObject, useId } from "react";
import { Field } from "../ui/Field.tsx";

/** The limits as typed (empty means null: no rate limit; the default in-flight limit), and the order. */
export type LimitValues = { rateLimit: string; maxInFlight: string; ordering: Ordering };
type Ordering = Endpoint["ordering"];

export const LIMIT_PARAMS = ["rate_limit", "max_in_flight"] as const;
export type LimitParam = (typeof LIMIT_PARAMS)[number];

export const limitValues = (
  e: { rate_limit: number | null; max_in_flight: number | null; ordering: Ordering } | null,
): LimitValues => ({
  rateLimit: e?.rate_limit == null ? "" : String(e.rate_limit),
  maxInFlight: e?.max_in_flight == null ? "" : String(e.max_in_flight),
  ordering: e?.ordering ?? "none",
});

/** The body's fields: always sent, so emptying a field clears the limit. The API checks the range. */
export const limitBody = (v: LimitValues) => ({
  rate_limit: asLimit(v.rateLimit),
  max_in_flight: asLimit(v.maxInFlight),
  ordering: v.ordering,
});

const asLimit = (text: string): number | null => (text.trim() === "" ? null : Number(text));

/**
 * A number input the browser could not read ("1e", "--"): its value is empty, which would save as
 * "no limit" while the person sees what they typed. Told, instead of saved.
 */
export const UNREADABLE = "Enter a whole number, or leave it empty.";
export const unreadable = (refs: Record<LimitParam, RefObject<HTMLInputElement | null>>) =>
  LIMIT_PARAMS.find((p) => refs[p].current?.validity.badInput) ?? null;

/** Each limit's field: the API's parameter, the form's value, and the API's range. */
const FIELDS: {
  param: LimitParam;
  value: keyof LimitValues;
  label: string;
  hint: string;
  max: number;
  placeholder: string;
}[] = [
  {
    param: "rate_limit",
    value: "rateLimit",
    label: "Rate limit (deliveries a second)",
    hint: "From 1 to 10,000. Leave empty for no limit.",
    max: 10_000,
    placeholder: "No limit",
  },
  {
    param: "max_in_flight",
    value: "maxInFlight",
    label: "Max in flight (attempts at once)",
    hint: "Lowers Herald's default for this endpoint (1 to 1,000; a higher value does not raise it). Leave empty for the default.",
    max: 1000,
    placeholder: "Default",
  },
];

/** The endpoint's delivery limits, each empty for none, and the order its deliveries go in. */
export function LimitFields({
  values,
  onChange,
  errorAt,
  refs,
}: {
  values: LimitValues;
  onChange: (change: Partial<LimitValues>) => void;
  errorAt: (param: LimitParam | "ordering") => string | null;
  refs: Record<LimitParam, RefObject<HTMLInputElement | null>>;
}) {
  const hintId = useId();
  return (
    <fieldset aria-describedby={hintId}>
      <legend>Delivery limits and order</legend>
      {/* Waiting is how both limits work: saying so up front answers "will my events fail?". */}
      <p id={hintId} className="hint fieldset-hint">
        Deliveries over a limit wait their turn: waiting never fails a delivery nor uses up a retry.
      </p>
      {FIELDS.map((f) => (
        <Field key={f.param} label={f.label} hint={f.hint} error={errorAt(f.param)}>
          {(props) => (
            <input
              {...props}
              ref={refs[f.param]}
              type="number"
              inputMode="numeric"
              min={1}
              max={f.max}
              step={1}
              placeholder={f.placeholder}
              value={values[f.value]}
              onChange={(e) => onChange({ [f.value]: e.target.value })}
            />
          )}
        </Field>
      ))}
      <Field
        label="Order"
        hint="In order: one delivery at a time, in the order events were accepted. A failing one holds the others while it is retried, until it succeeds or fails for good."
        error={errorAt("ordering")}
      >
        {(props) => (
          <select
            {...props}
            value={values.ordering}
            onChange={(e) => onChange({ ordering: e.target.value as Ordering })}
          >
            <option value="none">Any order: several at once (fastest)</option>
            <option value="fifo">In order (FIFO): one at a time</option>
          </select>
        )}
      </Field>
    </fieldset>
  );
}

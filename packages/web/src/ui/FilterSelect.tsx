import { Field } from "./Field.tsx";

export type FilterOption = { value: string; label: string };

/**
 * A list filter: a labelled select whose value lives in the URL query, so a filtered view can be
 * reloaded, shared, and returned to with Back. A value from the address that the options do not
 * hold (an older app, a deleted endpoint, a uid) stays shown and choosable.
 */
export function FilterSelect({
  label,
  all,
  options,
  value,
  onChange,
  disabled,
}: {
  label: string;
  /** The empty choice: "Any status", "All apps". */
  all: string;
  options: FilterOption[];
  value: string;
  onChange: (value: string) => void;
  disabled?: boolean;
}) {
  const shown =
    value && !options.some((o) => o.value === value) ? [...options, { value, label: value }] : options;
  return (
    <Field label={label}>
      {(props) => (
        <select {...props} value={value} disabled={disabled} onChange={(e) => onChange(e.target.value)}>
          <option value="">{all}</option>
          {shown.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** Options that read as their value (statuses, type names). */
export const plainOptions = (values: readonly string[]): FilterOption[] =>
  values.map((value) => ({ value, label: value }));

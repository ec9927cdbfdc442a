import type { ErrorObject, FuncKeywordDefinition } from "ajv";

/**
 * `uniqueItems` in time linear in the array: each item as canonical JSON (keys sorted, so
 * `{"a":1,"b":2}` and `{"b":2,"a":1}` are one value, as JSON Schema's equality says), then a
 * set. Ajv's own compares objects pairwise, n² deep comparisons.
 */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

type Check = ((data: unknown) => boolean) & { errors?: Partial<ErrorObject>[] };

const validate: Check = (data) => {
  const items = data as unknown[];
  const seen = new Map<string, number>();
  for (let j = 0; j < items.length; j++) {
    const key = canonical(items[j]);
    const i = seen.get(key);
    if (i !== undefined) {
      validate.errors = [
        {
          keyword: "uniqueItems",
          message: `must NOT have duplicate items (items ## ${i} and ${j} are identical)`,
          params: { i, j },
        },
      ];
      return false;
    }
    seen.set(key, j);
  }
  return true;
};

export const uniqueItems: FuncKeywordDefinition = {
  keyword: "uniqueItems",
  type: "array",
  schemaType: "boolean",
  // Only `uniqueItems: true` checks anything.
  compile: (unique: boolean) => (unique ? validate : () => true),
  errors: true,
};

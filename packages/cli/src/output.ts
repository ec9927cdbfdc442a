/**
 * What the CLI prints: tables and fields for people on stdout, JSON for scripts with `--json`,
 * progress and notes on stderr (so `--json` output stays parseable). Colour only on a terminal,
 * and never with NO_COLOR or `--no-color`.
 */
export type Column<T> = {
  header: string;
  value: (row: T) => string | number | null | undefined;
  max?: number;
};

let colour = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;

export function setColour(on: boolean): void {
  colour = on && Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
}

const paint = (code: string) => (text: string) => (colour ? `\x1b[${code}m${text}\x1b[0m` : text);
export const dim = paint("2");
export const bold = paint("1");
export const green = paint("32");
export const red = paint("31");
export const yellow = paint("33");

/** succeeded green, failed red, pending and the like yellow. */
export function status(value: string): string {
  if (["succeeded", "active", "completed"].includes(value)) return green(value);
  if (["failed", "disabled", "dropped"].includes(value)) return red(value);
  return yellow(value);
}

/** A time as `2026-11-25 14:03:07` in the machine's zone; `-` for none. */
export function time(iso: string | null | undefined): string {
  if (!iso) return "-";
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes are measured without their escapes
const ANSI = /\x1b\[[0-9;]*m/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are what is being escaped
const UNSAFE = /\x1b\[[0-9;]*m|[\x00-\x09\x0b-\x1f\x7f-\x9f]/g;

/**
 * Text from elsewhere (a receiver's response body, a customer's endpoint description, an error
 * message) made safe for a terminal: control characters, escape sequences among them, are shown
 * as `\x1b` and the like, never run. Newlines and colours (SGR, harmless) stay.
 */
export function clean(text: string): string {
  return text.replace(UNSAFE, (c) =>
    c.length > 1 ? c : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
}

const width = (text: string) => text.replace(ANSI, "").length;

function cell(value: string | number | null | undefined, max = 60): string {
  const text = value === null || value === undefined || value === "" ? "-" : String(value);
  // One line per row: a description's newlines or a response body's would break the table.
  const flat = clean(text.replace(/[\r\n\t]+/g, " "));
  return width(flat) > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function table<T>(rows: T[], columns: Column<T>[]): string {
  const cells = rows.map((row) => columns.map((c) => cell(c.value(row), c.max)));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => width(r[i]!))));
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v + " ".repeat(widths[i]! - width(v))))
      .join("  ")
      .trimEnd();
  return [dim(line(columns.map((c) => c.header))), ...cells.map(line)].join("\n");
}

/** An object's fields, one per line; nested values as compact JSON. */
export function fields(object: Record<string, unknown>, skip: string[] = []): string {
  const entries = Object.entries(object).filter(([k]) => !skip.includes(k));
  const pad = Math.max(...entries.map(([k]) => k.length));
  return entries
    .map(([k, v]) => {
      const text =
        v === null || v === undefined ? "-" : typeof v === "object" ? JSON.stringify(v) : String(v);
      return `${dim(k.padEnd(pad))}  ${clean(text)}`;
    })
    .join("\n");
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

export const out = (text: string) => process.stdout.write(`${text}\n`);
export const note = (text: string) => process.stderr.write(`${text}\n`);

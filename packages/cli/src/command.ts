import { type ParseArgsConfig, parseArgs } from "node:util";
import { Herald } from "@herald/sdk";
import { type Flags, resolveSettings, type Settings } from "./config.ts";
import { UsageError } from "./errors.ts";
import { setColour } from "./output.ts";

type Options = NonNullable<ParseArgsConfig["options"]>;
export type Values = Record<string, string | boolean | string[] | undefined>;

/** What every command takes. */
export const GLOBAL_OPTIONS = {
  url: { type: "string" },
  "api-key": { type: "string" },
  profile: { type: "string" },
  json: { type: "boolean" },
  "no-color": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} satisfies Options;

export const GLOBAL_HELP = `Global options:
  --url URL          the gateway (else HERALD_URL, the profile, http://localhost:8080)
  --api-key KEY      the API key (else HERALD_API_KEY, the profile)
  --profile NAME     the profile of the config file (else HERALD_PROFILE, the last logged in)
  --json             JSON on stdout, for scripts
  --no-color         no colours (also NO_COLOR)
  -h, --help         this command's help`;

export type Context = {
  values: Values;
  positionals: string[];
  settings: Settings;
  json: boolean;
  /** The API client; a UsageError when no API key is configured. */
  herald(): Herald;
  /** Ends with Ctrl-C (SIGINT) or SIGTERM. */
  stopped: AbortSignal;
};

export type Command = {
  /** As typed: `apps list`, `send`. */
  name: string;
  summary: string;
  /** The synopsis after `herald `, e.g. `apps show <app>`. */
  usage: string;
  /** More lines of help: options, examples. */
  help?: string;
  options?: Options;
  /** How many positionals it takes: [min, max]. */
  positionals?: [number, number];
  /**
   * It watches `stopped` and ends itself on Ctrl-C (listen, tail, replay's wait). Any other
   * command is ended at once, exit code 130.
   */
  handlesStop?: boolean;
  run(ctx: Context): Promise<number | undefined>;
};

export function helpOf(command: Command): string {
  return [
    `herald ${command.usage}`,
    "",
    command.summary,
    ...(command.help ? ["", command.help] : []),
    "",
    GLOBAL_HELP,
  ].join("\n");
}

/** Parses a command's arguments strictly: an unknown flag or a missing value is a UsageError. */
export function parse(command: Command, argv: string[], stopped: AbortSignal): Context | "help" {
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...GLOBAL_OPTIONS, ...command.options },
      allowPositionals: true,
      strict: true,
    }) as { values: Values; positionals: string[] };
  } catch (err) {
    throw new UsageError(
      `${(err as Error).message.replace(/\. To specify.*$/s, ".")} (herald ${command.usage})`,
    );
  }
  const { values, positionals } = parsed;
  if (values.help) return "help";
  const [min, max] = command.positionals ?? [0, 0];
  if (positionals.length < min) throw new UsageError(`Missing an argument: herald ${command.usage}`);
  if (positionals.length > max)
    throw new UsageError(`Unexpected argument "${positionals[max]}": herald ${command.usage}`);
  setColour(!values["no-color"] && !values.json);
  const settings = resolveSettings(values as Flags);
  if (!URL.canParse(settings.url) || !/^https?:$/.test(new URL(settings.url).protocol))
    throw new UsageError(
      `The gateway URL must be http or https, got "${settings.url}" (${settings.sources.url}).`,
    );
  let client: Herald | undefined;
  return {
    values,
    positionals,
    settings,
    json: Boolean(values.json),
    stopped,
    herald() {
      if (!settings.apiKey)
        throw new UsageError(
          "No API key: run `herald login`, set HERALD_API_KEY, or pass --api-key (`npm start` prints one).",
        );
      // A key pasted with a newline or a space would fail deep in fetch, unexplained.
      if (/[^\x21-\x7e]/.test(settings.apiKey))
        throw new UsageError(
          `The API key (${settings.sources.apiKey}) has spaces or other characters no key has.`,
        );
      client ??= new Herald({ apiKey: settings.apiKey, baseUrl: settings.url });
      return client;
    },
  };
}

/** A string flag's value, or undefined. */
export function str(values: Values, name: string): string | undefined {
  const v = values[name];
  return typeof v === "string" ? v : undefined;
}

/** A whole number flag within [min, max]. */
export function int(
  values: Values,
  name: string,
  fallback: number,
  min = 1,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const raw = str(values, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new UsageError(
      `--${name} must be a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ""}, got "${raw}".`,
    );
  return n;
}

/** One of `choices`, or undefined when the flag is absent. */
export function oneOf<T extends string>(values: Values, name: string, choices: readonly T[]): T | undefined {
  const raw = str(values, name);
  if (raw === undefined) return undefined;
  if (!(choices as readonly string[]).includes(raw))
    throw new UsageError(`--${name} must be one of ${choices.join(", ")}, got "${raw}".`);
  return raw as T;
}

/**
 * A time for `--since`: ISO 8601, unix seconds, or a duration back from now (`30m`, `2h`, `7d`).
 */
export function since(raw: string): string {
  const ago = /^(\d+)([smhd])$/.exec(raw);
  const unit = ago && { s: 1, m: 60, h: 3600, d: 86400 }[ago[2] as "s" | "m" | "h" | "d"];
  const time = ago
    ? new Date(Date.now() - Number(ago[1]) * unit! * 1000)
    : /^\d+$/.test(raw)
      ? new Date(Number(raw) * 1000)
      : new Date(raw);
  if (Number.isNaN(time.getTime()))
    throw new UsageError(
      `--since must be a time (ISO 8601 or unix seconds) or a duration like 30m, 2h, 7d; got "${raw}".`,
    );
  return time.toISOString();
}

export const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });

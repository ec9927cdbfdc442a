import { parseArgs } from "node:util";
import { PROFILE_NAMES } from "./profiles.ts";

export type Options = {
  quick: boolean;
  /** A running system to load instead of starting one, with an API key of it. */
  target: { url: string; key: string } | null;
  /** A git ref to compare this checkout with: its build runs alternately with this one (builds.ts). */
  against: string | null;
  /** Which profiles to run, in order (profiles.ts); both by default. */
  profiles: (typeof PROFILE_NAMES)[number][];
  dispatchers: number;
  senders: number;
  /** LOG_LEVEL of the lean profile; the deployed one logs at info, as deployed. */
  logLevel: string;
  /** Extra variables for every service (`--env KEY=VALUE`, repeatable). */
  env: Record<string, string>;
  cpuProf: boolean;
  /** `--soak <minutes>`: only the soak (soak.ts), for that many minutes; null otherwise. */
  soak: number | null;
  /** `--destination redis`: also HTTP endpoints against Redis streams (scenarios.ts); null otherwise. */
  destination: (typeof DESTINATIONS)[number] | null;
};

/** The destination types the benchmark can set beside HTTP. */
export const DESTINATIONS = ["redis"] as const;

/** The longest soak: a day. */
export const MAX_SOAK_MINUTES = 1440;

export const USAGE = `npm run bench -- [options]

  --quick               short windows (1 s warm-up, 3 s measured): about a minute and a half
  --profile <name>      lean (sources through tsx, warn logs, no traces) or deployed
                        (the built bundles on plain node, info logs, every trace exported);
                        repeatable; both by default
  --against <git ref>   also run that ref's build (in a worktree under bench-results/worktrees/),
                        alternating base, change, base, change in each profile, and print
                        each figure of both with change ÷ base
  --url <base> --key <api key>
                        load a running system instead of starting one
  --dispatchers <n>     dispatcher processes to start (1 to 32, default 1)
  --senders <n>         sender processes to start (1 to 32, default 1)
  --log-level <level>   LOG_LEVEL of the lean profile's services (default warn)
  --env KEY=VALUE       an extra variable for every service (repeatable)
  --cpu-prof            profile each service (node --cpu-prof) into bench-results/profiles/
  --destination redis   also the end-to-end closed loop to 10 HTTP endpoints, then to 10 Redis
                        streams on REDIS_URL (default redis://127.0.0.1:6379/0): deliveries/s,
                        p50 and p99 of each, and Redis ÷ HTTP; the streams are deleted after
  --soak <minutes>      only a soak (1 to 1440 minutes): the sustained scenario's load (80 % of
                        the closed loop's with 1 endpoint, measured first) for that long; prints
                        each minute's accepted, delivered, p50 and p99, backlog and each process's
                        resident memory (Herald's, PostgreSQL's, RabbitMQ's), then first minute
                        against last; lean unless --profile says otherwise`;

/** The command line, or an error message saying what is wrong with it. */
export function parseOptions(argv: string[]): Options | { error: string } {
  let values: ReturnType<typeof parse>["values"];
  try {
    values = parse(argv).values;
  } catch (err) {
    return { error: (err as Error).message };
  }
  if (values.help) return { error: "" };
  if (Boolean(values.url) !== Boolean(values.key)) return { error: "--url and --key go together" };
  if (values.against !== undefined && values.url)
    return { error: "--against starts both builds itself: it does not go with --url" };
  if (values.against !== undefined && !values.against.trim()) return { error: "--against takes a git ref" };
  let soak: number | null = null;
  if (values.soak !== undefined) {
    const minutes = /^\d+$/.test(values.soak.trim()) ? Number(values.soak.trim()) : Number.NaN;
    if (!(minutes >= 1 && minutes <= MAX_SOAK_MINUTES))
      return {
        error: `--soak takes a whole number of minutes from 1 to ${MAX_SOAK_MINUTES}, got "${values.soak}"`,
      };
    if (values.url)
      return { error: "--soak starts the system itself, to read its memory: it does not go with --url" };
    if (values.against !== undefined)
      return { error: "--soak runs this checkout only: it does not go with --against" };
    soak = minutes;
  }
  const destination = values.destination ?? null;
  if (destination !== null && !(DESTINATIONS as readonly string[]).includes(destination))
    return { error: `--destination takes ${DESTINATIONS.join(" or ")}, got "${destination}"` };
  if (destination && soak)
    return { error: "--destination does not go with --soak, which runs only the soak" };
  const count = (flag: string, raw: string | undefined): number | string => {
    const v = Number(raw ?? "1");
    return Number.isInteger(v) && v >= 1 && v <= 32 ? v : `--${flag} takes a whole number from 1 to 32`;
  };
  const dispatchers = count("dispatchers", values.dispatchers);
  const senders = count("senders", values.senders);
  if (typeof dispatchers === "string") return { error: dispatchers };
  if (typeof senders === "string") return { error: senders };
  // A soak is long: one profile unless told otherwise.
  const profiles = [...new Set(values.profile ?? (soak ? ["lean"] : PROFILE_NAMES))];
  const unknown = profiles.find((p) => !(PROFILE_NAMES as readonly string[]).includes(p));
  if (unknown) return { error: `--profile takes ${PROFILE_NAMES.join(" or ")}, got "${unknown}"` };
  const env: Record<string, string> = {};
  for (const pair of values.env ?? []) {
    const eq = pair.indexOf("=");
    if (eq < 1) return { error: `--env takes KEY=VALUE, got "${pair}"` };
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return {
    quick: values.quick ?? false,
    target: values.url && values.key ? { url: values.url.replace(/\/+$/, ""), key: values.key } : null,
    against: values.against?.trim() ?? null,
    profiles: profiles as Options["profiles"],
    dispatchers,
    senders,
    logLevel: values["log-level"] ?? "warn",
    env,
    cpuProf: values["cpu-prof"] ?? false,
    soak,
    destination: destination as Options["destination"],
  };
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    options: {
      quick: { type: "boolean" },
      profile: { type: "string", multiple: true },
      url: { type: "string" },
      against: { type: "string" },
      key: { type: "string" },
      dispatchers: { type: "string" },
      senders: { type: "string" },
      "log-level": { type: "string" },
      env: { type: "string", multiple: true },
      "cpu-prof": { type: "boolean" },
      soak: { type: "string" },
      destination: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}

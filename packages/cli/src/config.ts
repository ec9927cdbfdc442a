import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { DEFAULT_BASE_URL } from "@herald/sdk";
import { UsageError } from "./errors.ts";

/**
 * Where the CLI finds its gateway and key, first found wins: the flags (`--url`, `--api-key`),
 * the environment (HERALD_URL, HERALD_API_KEY), then the profile `herald login` wrote. The
 * profile file is HERALD_CONFIG, else $XDG_CONFIG_HOME/herald/config.json, else
 * ~/.config/herald/config.json; readable by its owner only. The profile is `--profile`, else
 * HERALD_PROFILE, else the last one logged in to, else `default`.
 */
export type Profile = { url?: string; api_key?: string; listen_secret?: string };
type File = { current?: string; profiles: Record<string, Profile> };

export type Settings = {
  url: string;
  apiKey: string | undefined;
  profile: string;
  /** Where each came from, for `herald config`. */
  sources: { url: string; apiKey: string };
};

export type Flags = { url?: string; "api-key"?: string; profile?: string };

export function configPath(env = process.env): string {
  if (env.HERALD_CONFIG) return env.HERALD_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(homedir(), ".config");
  return join(base, "herald", "config.json");
}

function readFile(path: string): File {
  if (!existsSync(path)) return { profiles: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new UsageError(
      `${path} is not valid JSON (${(err as Error).message}): fix it, or delete it and log in again.`,
    );
  }
  const file = parsed as Partial<File>;
  return {
    current: file.current,
    profiles: file.profiles && typeof file.profiles === "object" ? file.profiles : {},
  };
}

function writeFile(path: string, file: File): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // Written whole, then renamed: a crash mid-write never leaves half a file with a key in it.
  const temp = `${path}.${process.pid}.tmp`;
  // `wx`: a file (or a link) already there is never written through.
  writeFileSync(temp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600, flag: "wx" });
  renameSync(temp, path);
}

export function profileName(flags: Flags, env = process.env): string {
  return flags.profile || env.HERALD_PROFILE || readFile(configPath(env)).current || "default";
}

export function readProfile(name: string, env = process.env): Profile {
  return readFile(configPath(env)).profiles[name] ?? {};
}

/**
 * Merges `changes` into the profile (an undefined value removes that field); `login` also makes
 * it the current one.
 */
export function saveProfile(
  name: string,
  changes: Partial<Profile>,
  { makeCurrent = false } = {},
  env = process.env,
): string {
  const path = configPath(env);
  const file = readFile(path);
  const profile: Profile = { ...file.profiles[name], ...changes };
  for (const key of Object.keys(profile) as (keyof Profile)[])
    if (profile[key] === undefined) delete profile[key];
  file.profiles[name] = profile;
  if (makeCurrent) file.current = name;
  writeFile(path, file);
  return path;
}

export function resolveSettings(flags: Flags, env = process.env): Settings {
  const profile = profileName(flags, env);
  const saved = readProfile(profile, env);
  const pick = (flag: string | undefined, envName: string, fromProfile: string | undefined) =>
    flag
      ? { value: flag, source: "flag" }
      : env[envName]
        ? { value: env[envName], source: `env ${envName}` }
        : fromProfile
          ? { value: fromProfile, source: `profile ${profile}` }
          : { value: undefined, source: "none" };
  const url = pick(flags.url, "HERALD_URL", saved.url);
  const key = pick(flags["api-key"], "HERALD_API_KEY", saved.api_key);
  return {
    url: (url.value ?? DEFAULT_BASE_URL).replace(/\/+$/, ""),
    apiKey: key.value,
    profile,
    sources: { url: url.value ? url.source : "default", apiKey: key.source },
  };
}

/** The profile's signing secret for `herald listen`, made and saved on first use. */
export function listenSecret(profile: string, env = process.env): string {
  const saved = readProfile(profile, env).listen_secret;
  if (saved) return saved;
  const secret = `whsec_${randomBytes(32).toString("base64")}`;
  saveProfile(profile, { listen_secret: secret }, {}, env);
  return secret;
}

/** `hk_…` shown without its secret part: the first 6 and last 4 characters. */
export function maskKey(key: string): string {
  return key.length > 12 ? `${key.slice(0, 6)}…${key.slice(-4)}` : "…";
}

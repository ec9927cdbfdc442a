import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { Writable } from "node:stream";
import { Herald } from "@herald/sdk";
import { type Command, str } from "../command.ts";
import { configPath, maskKey, resolveSettings, saveProfile } from "../config.ts";
import { CliError, EXIT, UsageError } from "../errors.ts";
import { dim, fields, green, json, note, out } from "../output.ts";

/** The key typed at a prompt that does not echo it; Ctrl-C or Ctrl-D gives up. */
function prompt(question: string): Promise<string> {
  const muted = new Writable({ write: (_chunk, _enc, done) => done() });
  process.stderr.write(question);
  const rl = createInterface({ input: process.stdin, output: muted, terminal: true });
  return new Promise((resolve, reject) => {
    let answered = false;
    rl.on("SIGINT", () => rl.close());
    rl.on("close", () => {
      if (answered) return;
      process.stderr.write("\n");
      reject(new CliError("interrupted", EXIT.interrupted));
    });
    rl.question("", (answer) => {
      answered = true;
      rl.close();
      process.stderr.write("\n");
      resolve(answer.trim());
    });
  });
}

/** --api-key, else stdin when piped (`echo $KEY | herald login`), else a prompt. */
async function readKey(flag: string | undefined): Promise<string> {
  if (flag) return flag;
  if (!process.stdin.isTTY) return readFileSync(0, "utf8").trim();
  return prompt("API key (hk_…): ");
}

export const loginCommand: Command = {
  name: "login",
  usage: "login [--url URL] [--api-key KEY] [--profile NAME]",
  summary: "Checks an API key against the gateway and saves both in a profile, for every later command.",
  help: `The key comes from --api-key, else stdin when piped (echo "$KEY" | herald login), else a prompt.
The profile file (${configPath()}, or HERALD_CONFIG) is readable by you only.`,
  async run(ctx) {
    const profile = ctx.settings.profile;
    // As any command finds it (--url, HERALD_URL, the profile), else the default.
    const url = ctx.settings.url;
    const apiKey = await readKey(str(ctx.values, "api-key"));
    if (!apiKey) throw new UsageError("No API key given.");
    // Any call the key may make proves it: a key of one app may list apps too.
    await new Herald({ apiKey, baseUrl: url, maxRetries: 0 }).apps.list({ limit: 1 }).firstPage();
    const path = saveProfile(profile, { url, api_key: apiKey }, { makeCurrent: true });
    if (ctx.json) out(json({ profile, url, api_key: maskKey(apiKey), config: path }));
    else
      note(
        `${green("Logged in")} to ${url} as profile ${profile} (key ${maskKey(apiKey)}). ${dim(`Saved in ${path}.`)}`,
      );
    return 0;
  },
};

export const logoutCommand: Command = {
  name: "logout",
  usage: "logout [--profile NAME]",
  summary: "Removes the profile's URL and API key (its listen secret stays).",
  async run(ctx) {
    const path = saveProfile(ctx.settings.profile, { url: undefined, api_key: undefined });
    note(`Logged out of profile ${ctx.settings.profile}. ${dim(`(${path})`)}`);
    return 0;
  },
};

export const configCommand: Command = {
  name: "config",
  usage: "config",
  summary: "Shows the gateway and key the CLI would use, and where each comes from.",
  async run(ctx) {
    const s = resolveSettings(ctx.values);
    const shown = {
      profile: s.profile,
      url: s.url,
      url_from: s.sources.url,
      api_key: s.apiKey ? maskKey(s.apiKey) : null,
      api_key_from: s.sources.apiKey,
      config_file: configPath(),
    };
    out(ctx.json ? json(shown) : fields(shown));
    return 0;
  },
};

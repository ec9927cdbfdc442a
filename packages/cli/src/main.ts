import { type Command, GLOBAL_HELP, helpOf, parse } from "./command.ts";
import { endpointCommands } from "./commands/endpoints.ts";
import { keyCommands } from "./commands/keys.ts";
import { listenCommand } from "./commands/listen.ts";
import { configCommand, loginCommand, logoutCommand } from "./commands/login.ts";
import { replayCommand } from "./commands/replay.ts";
import { resourceCommands } from "./commands/resources.ts";
import { sendCommand } from "./commands/send.ts";
import { tailCommand } from "./commands/tail.ts";
import { describeError, EXIT, errorJson, exitCodeOf, UsageError } from "./errors.ts";

declare const HERALD_CLI_VERSION: string;

const commands: Command[] = [
  loginCommand,
  logoutCommand,
  configCommand,
  ...resourceCommands,
  ...endpointCommands,
  ...keyCommands,
  sendCommand,
  replayCommand,
  tailCommand,
  listenCommand,
];

function usage(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return `herald: the command line for Herald's API.

Usage: herald <command> [options]

Commands:
${commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join("\n")}

${GLOBAL_HELP}

Run \`herald <command> --help\` for a command's options. Exit codes: 0 done, 1 failed,
2 usage, 3 authentication, 4 not found, 5 gateway unreachable, 6 replayed deliveries failed again.`;
}

/** The command an argv names: two words (`apps list`) before one (`send`). */
function find(argv: string[]): { command: Command; rest: string[] } | null {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(" ");
    const command = commands.find((c) => c.name === name);
    if (command) return { command, rest: argv.slice(words) };
  }
  return null;
}

async function main(argv: string[]): Promise<number> {
  if (argv[0] === "--version" || argv[0] === "-v" || argv[0] === "version") {
    process.stdout.write(`herald ${HERALD_CLI_VERSION}\n`);
    return 0;
  }
  if (argv.length === 0 || argv[0] === "help" || argv[0] === "--help" || argv[0] === "-h") {
    const named = argv[0] === "help" ? find(argv.slice(1)) : null;
    process.stdout.write(`${named ? helpOf(named.command) : usage()}\n`);
    return 0;
  }
  const found = find(argv);
  const stopping = new AbortController();
  // Ctrl-C: a command that watches for it ends itself; any other ends here and now.
  const stop = () => (found?.command.handlesStop ? stopping.abort() : process.exit(EXIT.interrupted));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  let json = argv.includes("--json");
  try {
    if (!found) {
      const group = commands.filter((c) => c.name.startsWith(`${argv[0]} `)).map((c) => `herald ${c.usage}`);
      throw new UsageError(
        group.length
          ? `"${argv.join(" ")}" is not a command. Did you mean:\n  ${group.join("\n  ")}`
          : `Unknown command "${argv[0]}".`,
      );
    }
    const ctx = parse(found.command, found.rest, stopping.signal);
    if (ctx === "help") {
      process.stdout.write(`${helpOf(found.command)}\n`);
      return 0;
    }
    json = ctx.json;
    return (await found.command.run(ctx)) ?? 0;
  } catch (err) {
    const code = exitCodeOf(err);
    if (code === EXIT.interrupted) return code;
    process.stderr.write(`${json ? JSON.stringify(errorJson(err)) : describeError(err)}\n`);
    return code;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}

const code = await main(process.argv.slice(2));
// Exit once what was written is out: an idle keep-alive socket (the SDK's, a local server's)
// must not hold a finished command for seconds.
process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));

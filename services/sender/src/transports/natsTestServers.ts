import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deadPort } from "../../../../test/support/ports.ts";
import { untilListening } from "./testSupport.ts";

/**
 * nats-servers of the NATS transport's tests' own, for what the shared one (127.0.0.1:4222, no
 * accounts, no TLS) cannot show: a certificate nobody trusts, and accounts that need a password
 * or a token. Each runs in a temporary directory of its own, removed when it is closed.
 */

/** The account of `credentialServers`' user server; it may not publish to `t_denied.>`. */
export const NATS_USER = { username: "herald", password: "pa ss:w@rd" };

/** The token of `credentialServers`' token server. */
export const NATS_TOKEN = "t0ken-s3cret";

/** A nats-server started in `dir` with `args`, ready to take connections. */
async function natsServer(args: string[], dir: string): Promise<{ port: number; process: ChildProcess }> {
  const port = await deadPort();
  const child = spawn("nats-server", ["-a", "127.0.0.1", "-p", String(port), ...args], {
    cwd: dir,
    stdio: "ignore",
  });
  await untilListening(port);
  return { port, process: child };
}

/** Servers started in one temporary directory, all stopped and the directory removed by `close`. */
function servers(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const started: ChildProcess[] = [];
  return {
    dir,
    async start(args: string[]): Promise<number> {
      const server = await natsServer(args, dir);
      started.push(server.process);
      return server.port;
    },
    close(): void {
      for (const s of started) s.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A nats-server that speaks TLS only, with a certificate for nats.invalid that nobody trusts. */
export async function untrustedTlsServer(): Promise<{ port: number; close: () => void }> {
  const own = servers("herald-nats-tls-");
  try {
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=nats.invalid"].concat([
        "-addext",
        "subjectAltName=DNS:nats.invalid",
        "-keyout",
        "key.pem",
        "-out",
        "cert.pem",
      ]),
      { cwd: own.dir, stdio: "ignore" },
    );
    const port = await own.start(["--tls", "--tlscert", "cert.pem", "--tlskey", "key.pem"]);
    return { port, close: own.close };
  } catch (err) {
    own.close();
    throw err;
  }
}

/**
 * Two nats-servers that take no anonymous connection: one with the account NATS_USER, one with
 * the token NATS_TOKEN.
 */
export async function credentialServers(): Promise<{
  usersPort: number;
  tokenPort: number;
  close: () => void;
}> {
  const own = servers("herald-nats-auth-");
  try {
    writeFileSync(
      join(own.dir, "users.conf"),
      `authorization {
  users: [
    { user: ${NATS_USER.username}, password: ${JSON.stringify(NATS_USER.password)}, permissions: { publish: { deny: ["t_denied.>"] } } }
  ]
}
`,
    );
    const usersPort = await own.start(["-c", "users.conf"]);
    const tokenPort = await own.start(["--auth", NATS_TOKEN]);
    return { usersPort, tokenPort, close: own.close };
  } catch (err) {
    own.close();
    throw err;
  }
}

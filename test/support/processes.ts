import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import serviceNodeFlags from "@herald/runtime/service-node-flags.json" with { type: "json" };

/** A Node process whose output (stdout and stderr together) is kept for assertions. */
export type NodeProcess = {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
};

/** `node <args>` with exactly `env` (nothing inherited unless the caller passes it). */
export function runNode(args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): NodeProcess {
  const child = spawn(process.execPath, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, output: () => out, exited };
}

/** A service started as its own process, as `npm start` and a pod would run it. */
export type ServiceProcess = NodeProcess & { name: string };

const root = join(import.meta.dirname, "..", "..");

/** The flags `npm start` and the images run every service with (its heap cap). */
export const SERVICE_NODE_FLAGS: string[] = serviceNodeFlags;

/**
 * `nodeFlags`: what else node runs with; SERVICE_NODE_FLAGS for the heap cap every service has
 * under `npm start` and in its image, where a test must see what runs out of memory there.
 */
export function spawnService(
  service: "dispatcher" | "sender" | "api-gateway",
  name: string,
  env: Record<string, string>,
  nodeFlags: string[] = [],
): ServiceProcess {
  const run = runNode([...nodeFlags, "--import", "tsx", join("services", service, "src", "main.ts")], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: "warn", ...env },
  });
  return { name, ...run };
}

export async function stopAll(services: ServiceProcess[]): Promise<void> {
  for (const s of services) if (s.child.exitCode === null) s.child.kill("SIGTERM");
  await Promise.race([Promise.all(services.map((s) => s.exited)), new Promise((r) => setTimeout(r, 20_000))]);
  for (const s of services) if (s.child.exitCode === null) s.child.kill("SIGKILL");
}

/** A TCP port free right now on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once the service has printed `text`; rejects with its output if it exits or takes too long. */
export async function waitForOutput(
  service: ServiceProcess,
  text: string,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!service.output().includes(text)) {
    if (service.child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`${service.name} did not print "${text}":\n${service.output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

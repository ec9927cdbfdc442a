import { readFileSync } from "node:fs";
import { join } from "node:path";
import images from "../../scripts/lib/images.json" with { type: "json" };

/**
 * The Dockerfile read as the builder reads it, for tests that cannot run Docker: line
 * continuations joined, comments dropped, global ARG defaults substituted into FROM, and the
 * settings a stage inherits (USER, ENTRYPOINT, CMD, ENV, WORKDIR) followed through FROM.
 */
export type Instruction = { op: string; args: string };
export type Stage = { name: string; from: string; instructions: Instruction[] };

export const root = join(import.meta.dirname, "..", "..");
export type ImageTarget = keyof typeof images;
export const IMAGES = images as Record<
  ImageTarget,
  {
    package: string;
    entry: string;
    bundle: string;
    /** Worker threads' bundles, beside the service's. */
    workers?: { entry: string; bundle: string }[];
    assets: string[];
    port?: number;
  }
>;

export function parseDockerfile(text: string = readFileSync(join(root, "Dockerfile"), "utf8")): Stage[] {
  const lines = text
    .split("\n")
    .filter((l) => !/^\s*#/.test(l))
    .join("\n")
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, op = "", rest = ""] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const instruction = { op: op.toUpperCase(), args: rest };
    if (instruction.op === "ARG" && stages.length === 0) {
      const [name, value = ""] = rest.split("=");
      args[name!] = value;
    } else if (instruction.op === "FROM") {
      const [image = "", , name = ""] = rest
        .replace(/\$\{(\w+)\}|\$(\w+)/g, (_m, a?: string, b?: string) => args[(a ?? b)!] ?? "")
        .split(/\s+/);
      stages.push({ name, from: image, instructions: [] });
    } else stages.at(-1)?.instructions.push(instruction);
  }
  return stages;
}

/** The instructions that apply to `name`, its base stages' first (FROM chain). */
export function effective(stages: Stage[], name: string): Instruction[] {
  const stage = stages.find((s) => s.name === name);
  if (!stage) throw new Error(`no stage ${name}`);
  const base = stages.find((s) => s.name === stage.from);
  return [...(base ? effective(stages, base.name) : []), ...stage.instructions];
}

/** The last value of `op` a stage has (its own or inherited); JSON forms parsed. */
export function setting(stages: Stage[], name: string, op: string): string | string[] | undefined {
  const found = effective(stages, name).filter((i) => i.op === op);
  const last = found.at(-1)?.args;
  if (last === undefined) return undefined;
  return last.startsWith("[") ? (JSON.parse(last) as string[]) : last;
}

/** ENV of a stage with its bases', `ENV A=1 B=2` form. */
export function envOf(stages: Stage[], name: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const i of effective(stages, name).filter((i) => i.op === "ENV")) {
    for (const [, k, v] of i.args.matchAll(/(\w+)=(\S+)/g)) env[k!] = v!;
  }
  return env;
}

/** The root stage a stage builds on (the image it starts FROM). */
export function baseImage(stages: Stage[], name: string): string {
  const stage = stages.find((s) => s.name === name)!;
  const parent = stages.find((s) => s.name === stage.from);
  return parent ? baseImage(stages, parent.name) : stage.from;
}

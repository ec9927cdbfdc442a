import { spawnSync } from "node:child_process";
import type { Build } from "./builds.ts";
import { onCleanUp } from "./cleanup.ts";
import { type OtlpSink, startOtlpSink } from "./otlpSink.ts";
import { fromBuild, fromSource, type Launch } from "./services.ts";

/**
 * How the services run during a pass of the scenarios.
 *
 * - `lean`: as a developer's `npm start` runs them (sources through tsx), logging warnings only
 *   and exporting no traces: what the code itself costs.
 * - `deployed`: as the images run them (`npm run build`'s bundles, plain node, NODE_ENV=production),
 *   with deploy/base/config.env's LOG_LEVEL=info and every event's trace exported over OTLP/HTTP
 *   protobuf to a sink inside the benchmark: what users running it pay, tracing included.
 */
export const PROFILE_NAMES = ["lean", "deployed"] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number] | "given";

export type Profile = {
  name: ProfileName;
  description: string;
  launch: Launch;
  logLevel: string;
  env: Record<string, string>;
  /** Where the deployed profile's traces go; null when nothing is exported. */
  sink: OtlpSink | null;
};

const SERVICE_TARGETS = ["api-gateway", "dispatcher", "sender"];

/**
 * `npm run build` of the three services into `outDir`, as the Dockerfile builds the images: the
 * build script of the tree at `root` (another build's own, with --against).
 */
function buildServices(root: string, outDir: string): void {
  const result = spawnSync(
    process.execPath,
    ["scripts/build-services.mjs", "--out", outDir, ...SERVICE_TARGETS],
    { cwd: root, encoding: "utf8" },
  );
  if (result.status !== 0) throw new Error(`npm run build failed:\n${result.stdout}${result.stderr}`);
}

export async function prepareProfile(
  name: (typeof PROFILE_NAMES)[number],
  o: { build: Build; buildDir: string; logLevel: string },
): Promise<Profile> {
  if (name === "lean") {
    return {
      name,
      description: `services from source through tsx, LOG_LEVEL=${o.logLevel}, no trace export`,
      launch: fromSource(o.build.root, o.build.nodeFlags),
      logLevel: o.logLevel,
      env: {},
      sink: null,
    };
  }
  buildServices(o.build.root, o.buildDir);
  const sink = await startOtlpSink();
  onCleanUp(sink.close);
  return {
    name,
    description:
      "bundles of npm run build on plain node, LOG_LEVEL=info, every trace exported (OTLP/HTTP protobuf)",
    launch: fromBuild(o.buildDir, o.build.nodeFlags, o.build.bundle),
    logLevel: "info",
    env: {
      NODE_ENV: "production",
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_NODE_RESOURCE_DETECTORS: "env,host,os,process",
    },
    sink,
  };
}

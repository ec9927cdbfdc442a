import { spawn } from "node:child_process";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CpuFigures } from "../../packages/bench/src/cpu.ts";
import type { BenchResults, ProfileResults, Ratios } from "../../packages/bench/src/results.ts";
import { DEFAULT_MAX_IN_FLIGHT } from "../../services/dispatcher/src/config.ts";

/**
 * The benchmark check: `node scripts/bench.mjs --quick` runs end to end, both profiles (lean and
 * as deployed), and writes figures that make sense. It asserts no timing and no target: those
 * depend on the machine and on the day. Serial: the benchmark wants the machine to itself.
 */
const root = join(import.meta.dirname, "..", "..");
const results = join(root, "bench-results");
const TIMEOUT_MS = 360_000;

function runQuickBench(): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["scripts/bench.mjs", "--quick"], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    // Past the limit: SIGINT lets it stop the services it started; SIGKILL if that hangs.
    const interrupt = setTimeout(() => child.kill("SIGINT"), TIMEOUT_MS);
    const kill = setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS + 20_000);
    child.on("exit", (code) => {
      clearTimeout(interrupt);
      clearTimeout(kill);
      resolve({ code, output });
    });
  });
}

function positive(value: number, what: string): void {
  expect(Number.isFinite(value) && value > 0, `${what} = ${value}`).toBe(true);
}

function ratiosMatch(figure: number, ratios: Ratios, r: BenchResults, what: string): void {
  const c = r.ceilings;
  expect(ratios.http, `${what} ÷ HTTP`).toBeCloseTo(figure / c.httpPostsPerSecond, 9);
  expect(ratios.rabbitmq, `${what} ÷ RabbitMQ`).toBeCloseTo(figure / c.rabbitmqMessagesPerSecond, 9);
  expect(ratios.postgres, `${what} ÷ Postgres`).toBeCloseTo(figure / c.postgresInsertsPerSecond, 9);
}

/** CPU per delivery of a window: every part of the stack measured, adding up to the whole. */
function checkCpu(cpu: CpuFigures | null, deliveries: number, what: string): void {
  expect(cpu, `${what}: CPU measured`).not.toBeNull();
  expect(cpu!.parts.map((x) => x.name)).toEqual([
    "api-gateway",
    "dispatcher",
    "sender",
    "postgres",
    "rabbitmq",
  ]);
  // Deliveries per second are rounded to 0.1.
  expect(Math.abs(cpu!.deliveries - deliveries), `${what}: deliveries divided by`).toBeLessThanOrEqual(
    cpu!.windowSeconds,
  );
  for (const part of cpu!.parts) expect(part.cpuMs, `${what}: CPU of ${part.name}`).toBeGreaterThan(0);
  expect(cpu!.wholeStack.cpuMs).toBeCloseTo(
    cpu!.parts.reduce((sum, x) => sum + x.cpuMs, 0),
    6,
  );
  positive(cpu!.wholeStack.perDeliveryMs!, `${what}: whole-stack CPU per delivery`);
}

/** One profile's figures: positive, consistent with the ceilings, nothing lost. */
function checkProfile(p: ProfileResults, r: BenchResults): void {
  positive(p.ingest.eventsPerSecond, "ingest");
  ratiosMatch(p.ingest.eventsPerSecond, p.ingest.ratios, r, "ingest");

  expect(p.endToEnd.map((e) => e.name)).toEqual([
    "1 endpoint",
    "10 endpoints",
    "10 endpoints, each filtered",
    "10 endpoints, each transformed",
  ]);
  for (const e of p.endToEnd) {
    positive(e.deliveriesPerSecond, `end-to-end ${e.name}`);
    ratiosMatch(e.deliveriesPerSecond, e.ratios, r, `end-to-end ${e.name}`);
    positive(e.expected, `end-to-end ${e.name}: deliveries expected`);
    expect(e.lost, `end-to-end ${e.name}: deliveries lost`).toBe(0);
    // What the events left on disk: every event at least its row, shared among its deliveries.
    const disk = e.disk!;
    expect(disk.events * e.endpoints, `end-to-end ${e.name}: events measured`).toBe(e.expected);
    positive(disk.bytesPerEvent, `end-to-end ${e.name}: bytes per event`);
    // Both rounded to the byte: apart by at most half a byte per endpoint.
    expect(Math.abs(disk.bytesPerDelivery * e.endpoints - disk.bytesPerEvent)).toBeLessThanOrEqual(
      e.endpoints,
    );
    positive(e.deliveredOverAccepted!, `end-to-end ${e.name}: delivered ÷ accepted`);
    checkCpu(e.cpu, e.deliveriesPerSecond * e.measureSeconds, `end-to-end ${e.name}`);
  }

  // A transformed endpoint and a plain one at the same time: both deliver, nothing lost.
  const beside = p.transformedBesidePlain!;
  for (const [name, loop] of [
    ["transformed", beside.transformed],
    ["plain", beside.plain],
  ] as const) {
    positive(loop.deliveriesPerSecond, `beside plain, ${name}`);
    expect(loop.eventsInFlight, `beside plain, ${name}: half the closed loop's`).toBe(160);
    expect(loop.p50Ms).toBeLessThanOrEqual(loop.p99Ms);
    expect(loop.lost, `beside plain, ${name}: deliveries lost`).toBe(0);
  }
  expect(beside.transformedOverPlain.deliveriesPerSecond).toBeCloseTo(
    beside.transformed.deliveriesPerSecond / beside.plain.deliveriesPerSecond,
    2,
  );

  // Sustained: 80 % of the closed loop's rate with 1 endpoint, sampled each second, nothing lost.
  const s = p.sustained!;
  expect(s.rate).toBe(Math.round(0.8 * p.endToEnd[0]!.deliveriesPerSecond));
  positive(s.count, "sustained deliveries");
  positive(s.deliveredOverAccepted!, "sustained: delivered ÷ accepted");
  expect(s.lost, "sustained: deliveries lost").toBe(0);
  expect(s.samples.length, "a backlog sample about each second").toBeGreaterThanOrEqual(s.measureSeconds);
  for (const x of s.samples) expect(x.backlog).toBe(x.queued + x.open);
  expect(s.backlog.min).toBeLessThanOrEqual(s.backlog.max);
  expect(s.backlog.bounded).not.toBeNull();
  checkCpu(s.cpu, s.eventsAcceptedPerSecond * s.measureSeconds * (s.deliveredOverAccepted ?? 1), "sustained");

  expect(p.latency.map((l) => l.rate)).toEqual([200, 1000]);
  for (const l of p.latency) {
    for (const v of [l.p50Ms, l.p95Ms, l.p99Ms]) positive(v, `latency at ${l.rate}/s`);
    expect(l.p50Ms).toBeLessThanOrEqual(l.p95Ms);
    expect(l.p95Ms).toBeLessThanOrEqual(l.p99Ms);
  }

  // Beside a hanging endpoint: nothing lost on either side, and the hanging one never had more
  // attempts out than ENDPOINT_MAX_IN_FLIGHT's default, though 1,000 were queued for it and
  // the sender had more live slots than that.
  const { healthy, hanging } = p.neighbour;
  positive(healthy.count, "deliveries beside a hanging endpoint");
  expect(healthy.p50Ms).toBeLessThanOrEqual(healthy.p99Ms);
  expect(healthy.lost, "healthy deliveries lost beside a hanging endpoint").toBe(0);
  expect(hanging.accepted, "events accepted for the hanging endpoint").toBe(hanging.events);
  expect(hanging.lost, "the hanging endpoint's deliveries lost once it answered").toBe(0);
  expect(hanging.mostInFlight).toBeGreaterThan(0);
  expect(hanging.mostInFlight).toBeLessThanOrEqual(DEFAULT_MAX_IN_FLIGHT);

  expect(p.memory.map((m) => m.service).sort()).toEqual(["api-gateway", "dispatcher", "sender"]);
  for (const m of p.memory) positive(m.peakMb, `peak memory of ${m.service}`);
}

describe("npm run bench -- --quick", () => {
  it(
    "runs the whole benchmark and writes sane figures",
    async () => {
      const started = Date.now();
      const { code, output } = await runQuickBench();
      expect(code, output).toBe(0);

      const r = JSON.parse(await readFile(join(results, "latest.json"), "utf8")) as BenchResults;
      expect(Date.parse(r.startedAt), "latest.json is from this run").toBeGreaterThanOrEqual(started - 1000);
      expect(r.mode).toBe("quick");
      expect(r.version).toBe(3);
      expect(r.against).toBeNull();

      positive(r.ceilings.httpPostsPerSecond, "HTTP ceiling");
      positive(r.ceilings.rabbitmqMessagesPerSecond, "RabbitMQ ceiling");
      positive(r.ceilings.postgresInsertsPerSecond, "Postgres ceiling");

      expect(r.bounds.map((b) => b.name)).toEqual([
        "ingest",
        "end-to-end, 1 endpoint",
        "end-to-end, 10 endpoints",
      ]);
      for (const b of r.bounds) {
        positive(b.perSecond, `bound of ${b.name}`);
        expect(b.ratioToHttp, `bound of ${b.name} ÷ HTTP`).toBeCloseTo(
          b.perSecond / r.ceilings.httpPostsPerSecond,
          9,
        );
      }

      expect(r.profiles.map((p) => p.profile)).toEqual(["lean", "deployed"]);
      for (const p of r.profiles) checkProfile(p, r);

      // As deployed, the events' traces reach the sink, and no hop takes longer than the whole.
      const [lean, deployed] = r.profiles as [ProfileResults, ProfileResults];
      expect(lean.hops, "the lean profile exports no traces").toBeNull();
      const hops = deployed.hops!;
      expect(hops.complete, "complete traces").toBeGreaterThan(0.9 * deployed.latency[0]!.count);
      expect(hops.hops.map((h) => h.name)).toHaveLength(8);
      positive(hops.total.p50Ms, "request → webhook call, p50");
      positive(hops.bytesPerTrace, "OTLP bytes exported per trace");
      // Span starts are whole milliseconds: a hop may read 1 ms over.
      for (const h of hops.hops) expect(h.p50Ms, h.name).toBeLessThanOrEqual(hops.total.p50Ms + 1);
      // Both profiles sample the database at the first rate, and see the fan-out's statements.
      for (const p of r.profiles) {
        positive(p.dbWaits!.samples, `${p.profile}: database samples`);
        expect(p.dbWaits!.busiest.map((b) => b.statement)).toContain("release gate (fan-out)");
      }
      for (const name of ["api-gateway", "dispatcher", "sender"]) {
        const log = deployed.serviceOutput.find((o) => o.service === name)!;
        expect(log.log, "each profile logs to its own directory").toContain(join("logs", "deployed"));
      }

      expect((await stat(join(results, `${r.startedAt.replace(/[:.]/g, "-")}.json`))).isFile()).toBe(true);
      const page = await readFile(join(results, "report.html"), "utf8");
      expect(page).toContain("<svg");
      expect(page).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    },
    TIMEOUT_MS + 30_000,
  );
});

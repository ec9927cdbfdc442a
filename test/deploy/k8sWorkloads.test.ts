import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { loadConfig as gatewayConfig } from "../../services/api-gateway/src/config.ts";
import { loadConfig as dispatcherConfig } from "../../services/dispatcher/src/config.ts";
import { loadConfig as senderConfig } from "../../services/sender/src/config.ts";
import { envOf, parseDockerfile, setting } from "../support/dockerfile.ts";
import {
  type Container,
  containerEnv,
  find,
  imageParts,
  type K8sObject,
  migrationJob,
  ofKind,
  overlays,
  podTemplates,
  render,
  renderEdited,
  type Service,
  sampleSecrets,
  serviceContainer,
  services,
  targets,
} from "../support/k8s.ts";

/**
 * The pods deploy/ describes, checked against what Herald's services need and how they behave:
 * the environment each reads (their own loadConfig, run on the environment the kubelet would
 * build), the ports and paths their health servers answer on, their heap cap and shutdown
 * deadlines, and the hardening every container gets.
 */
const encryptionKey = randomBytes(32).toString("base64");
const secrets = sampleSecrets(encryptionKey);
const loaders = { "api-gateway": gatewayConfig, dispatcher: dispatcherConfig, sender: senderConfig } as const;
const serviceNames = Object.keys(services) as Service[];
const secretVariables = ["ENCRYPTION_KEY", "ADMIN_TOKEN", "DATABASE_URL", "AMQP_URL"];

function allContainers(objects: K8sObject[]): { owner: string; container: Container; init: boolean }[] {
  return podTemplates(objects).flatMap(({ owner, spec }) => [
    ...((spec.initContainers ?? []) as Container[]).map((container) => ({
      owner: owner.metadata.name,
      container,
      init: true,
    })),
    ...(spec.containers as Container[]).map((container) => ({
      owner: owner.metadata.name,
      container,
      init: false,
    })),
  ]);
}

/** Every variable a service's loadConfig reads from `env` (it throws on a bad configuration). */
function readBy(service: Service, env: Record<string, string>) {
  const read = new Set<string>();
  const recording = new Proxy(env, {
    get(target, key) {
      if (typeof key === "string") read.add(key);
      return target[key as string];
    },
  });
  const config = () => loaders[service](recording);
  return { read, config };
}

function variablesReadBy(service: Service, env: Record<string, string>): Set<string> {
  const { read, config } = readBy(service, env);
  try {
    config();
  } catch {
    // Another service's environment need not suit this one: only the names matter here.
  }
  return read;
}

const units: Record<string, number> = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 };
function bytes(quantity: string): number {
  const match = /^(\d+)(Ki|Mi|Gi)?$/.exec(quantity);
  if (!match) throw new Error(`unexpected memory quantity ${quantity}`);
  return Number(match[1]) * (match[2] ? units[match[2]]! : 1);
}

/**
 * The image each container runs is the Dockerfile stage of that name (the manifests set no
 * command): its heap cap is the last `--max-old-space-size` Node sees, the command line's
 * before NODE_OPTIONS (the container's, else the image's).
 */
const stages = parseDockerfile();
function stageOf(container: Container): string {
  const { name } = imageParts(container.image);
  expect(
    stages.map((s) => s.name),
    `${container.name} runs image ${name}`,
  ).toContain(name);
  return name;
}
function heapCap(container: Container, env: Record<string, string>): number {
  const stage = stageOf(container);
  const cmd = [setting(stages, stage, "CMD") ?? []].flat().join(" ");
  const options = env.NODE_OPTIONS ?? envOf(stages, stage).NODE_OPTIONS ?? "";
  const cap = /--max-old-space-size=(\d+)/.exec(cmd) ?? /--max-old-space-size=(\d+)/.exec(options);
  if (!cap) throw new Error(`${container.name}: no heap cap in image ${stage} or its environment`);
  return Number(cap[1]);
}

/**
 * The gateway's schema workers: each a heap of SCHEMA_WORKER_HEAP_MB (a schema that needs more
 * ends its worker, not the pod) and ~16 MB of its own besides.
 */
function schemaWorkersMb(container: Container, env: Record<string, string>): number {
  if (stageOf(container) !== "api-gateway") return 0;
  const config = gatewayConfig(env);
  return config.schemaWorkers * (config.schemaWorkerHeapMb + 16);
}

/**
 * Each service's grace period against its own shutdown deadline, from the rendered manifests:
 * the sender's is ATTEMPT_TIMEOUT (its container's environment) + 15 s
 * (services/sender/src/main.ts), the gateway's its preStop then 30 s, the dispatcher's 30 s.
 */
function shutdownProblems(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  const grace = (service: Service) =>
    find(objects, "Deployment", services[service].deployment).spec.template.spec
      .terminationGracePeriodSeconds * 1000;
  const sender = senderConfig(containerEnv(objects, serviceContainer(objects, "sender"), secrets));
  if (!(grace("sender") > sender.attemptTimeoutMs + 15_000))
    problems.push(
      `sender: terminationGracePeriodSeconds ${grace("sender") / 1000} s is not above ATTEMPT_TIMEOUT (${sender.attemptTimeoutMs / 1000} s) + 15 s`,
    );
  const preStop = serviceContainer(objects, "api-gateway").lifecycle.preStop.sleep.seconds * 1000;
  if (!(grace("api-gateway") > preStop + 30_000))
    problems.push("api-gateway: grace not above preStop + 30 s");
  if (!(grace("dispatcher") > 30_000)) problems.push("dispatcher: grace not above 30 s");
  return problems;
}

describe.each(Object.keys(targets) as (keyof typeof targets)[])("the pods of %s", (target) => {
  const objects = render(target);

  it("run every container as a numeric non-root user, read-only, with nothing to escalate", () => {
    for (const { spec, owner } of podTemplates(objects)) {
      const pod = spec.securityContext;
      expect(pod.runAsNonRoot, owner.metadata.name).toBe(true);
      expect(pod.runAsUser).toBeGreaterThan(0);
      expect(pod.seccompProfile).toEqual({ type: "RuntimeDefault" });
      expect(spec.automountServiceAccountToken, owner.metadata.name).toBe(false);
    }
    for (const { owner, container } of allContainers(objects)) {
      const where = `${owner}/${container.name}`;
      const sc = container.securityContext;
      expect(sc, where).toBeDefined();
      expect(sc.runAsNonRoot, where).toBe(true);
      // The user the image itself runs as (the node image's `node`), by number, so the
      // kubelet can verify it is not root and the image's files stay readable.
      const [user, group] = String(setting(stages, stageOf(container), "USER"))
        .split(":")
        .map(Number);
      expect(sc.runAsUser, where).toBe(1000);
      expect([sc.runAsUser, sc.runAsGroup], where).toEqual([user, group ?? user]);
      // The image's own command (tini, then its service): nothing to override.
      expect(container.command, where).toBeUndefined();
      expect(container.args, where).toBeUndefined();
      expect(sc.allowPrivilegeEscalation, where).toBe(false);
      expect(sc.readOnlyRootFilesystem, where).toBe(true);
      expect(sc.privileged ?? false, where).toBe(false);
      expect(sc.capabilities, where).toEqual({ drop: ["ALL"] });
      expect(sc.seccompProfile, where).toEqual({ type: "RuntimeDefault" });
    }
  });

  it("give every container a writable /tmp on an emptyDir, the only place Node may write", () => {
    for (const { spec, owner } of podTemplates(objects)) {
      const tmp = (spec.volumes ?? []).find((v: { name: string }) => v.name === "tmp");
      expect(tmp?.emptyDir, owner.metadata.name).toBeDefined();
      expect(tmp.emptyDir.sizeLimit).toBeDefined();
    }
    for (const { owner, container } of allContainers(objects)) {
      expect(container.volumeMounts, `${owner}/${container.name}`).toContainEqual({
        name: "tmp",
        mountPath: "/tmp",
      });
    }
  });

  it("set requests and limits on every container, the memory limit above the heap cap", () => {
    for (const { owner, container } of allContainers(objects)) {
      const where = `${owner}/${container.name}`;
      const { requests, limits } = container.resources ?? {};
      for (const resource of ["cpu", "memory"]) {
        expect(requests?.[resource], `${where} requests ${resource}`).toBeDefined();
        expect(limits?.[resource], `${where} limits ${resource}`).toBeDefined();
      }
      const limit = bytes(limits.memory);
      expect(bytes(requests.memory), where).toBeLessThanOrEqual(limit);
      // The heap cap plus ~60 MB of code, buffers and native memory fits the limit: a process
      // that grows is stopped by V8 with a clear error, not OOM-killed.
      const env = containerEnv(objects, container, secrets);
      const heapMb = heapCap(container, env) + schemaWorkersMb(container, env);
      expect((heapMb + 60) * 1024 * 1024, where).toBeLessThanOrEqual(limit);
    }
    // The services themselves: the heap cap and, beside it, the gateway's schema workers' heaps,
    // the dispatcher's and senders' buffers of large messages (docs/operations.md, "Limits"), and
    // in the gateway and senders two transformation workers of up to ~100 MiB each.
    const limits = { "api-gateway": "640Mi", dispatcher: "384Mi", sender: "512Mi" } as Record<string, string>;
    for (const service of serviceNames)
      expect(serviceContainer(objects, service).resources.limits.memory, service).toBe(limits[service]);
  });

  it("take every secret from a Secret, never from the manifests", () => {
    for (const configMap of ofKind(objects, "ConfigMap")) {
      for (const name of secretVariables)
        expect(configMap.data, configMap.metadata.name).not.toHaveProperty(name);
    }
    for (const { owner, container } of allContainers(objects)) {
      for (const v of container.env ?? []) {
        if (secretVariables.includes(v.name))
          expect(v.valueFrom?.secretKeyRef, `${owner} ${v.name}`).toBeDefined();
      }
    }
    // CloudNativePG's Secret is used only where CloudNativePG runs the database.
    const usesCnpgSecret = allContainers(objects).some(({ container }) =>
      (container.env ?? []).some(
        (v: { valueFrom?: { secretKeyRef?: { name: string } } }) =>
          v.valueFrom?.secretKeyRef?.name === "herald-db-app",
      ),
    );
    expect(usesCnpgSecret).toBe(ofKind(objects, "Cluster").some((c) => c.metadata.name === "herald-db"));
  });

  describe.each(serviceNames)("the %s container", (service) => {
    // Built inside each test, so a broken manifest fails that test, not the whole file.
    const setup = () => {
      const container = serviceContainer(objects, service);
      const env = containerEnv(objects, container, secrets);
      const { read, config } = readBy(service, env);
      return { container, env, read, config: config() };
    };

    it("gets an environment its loadConfig accepts, pointing at no local address", () => {
      const { env, read, config } = setup();
      expect(config).toBeDefined();
      // Defaults made for one machine (127.0.0.1 databases and brokers) would fail in a pod.
      expect(JSON.stringify(config)).not.toMatch(/\/\/(127\.0\.0\.1|localhost)[:/]/);
      expect(read.has("AMQP_URL")).toBe(true);
      expect(env.AMQP_URL).toBe(secrets["herald-secrets"]!.AMQP_URL);
      if (read.has("DATABASE_URL")) expect(env.DATABASE_URL).toMatch(/^postgresql:\/\/herald:sample@/);
      else expect(env.DATABASE_URL).toBeUndefined();
      if (read.has("ENCRYPTION_KEY")) expect(env.ENCRYPTION_KEY).toBe(encryptionKey);
      else expect(env.ENCRYPTION_KEY, "only the services that need the key get it").toBeUndefined();
    });

    it("sets only variables something reads (a misspelt name is not silently ignored)", () => {
      const { env } = setup();
      // Read outside loadConfig: by the logger, by the OpenTelemetry SDK, by Node itself.
      const readElsewhere = (name: string) =>
        ["LOG_LEVEL", "NODE_OPTIONS", "POD_NAME"].includes(name) || name.startsWith("OTEL_");
      // The shared ConfigMap holds what any of the services reads.
      const readByAny = new Set(serviceNames.flatMap((s) => [...variablesReadBy(s, env)]));
      for (const name of Object.keys(env))
        expect(readByAny.has(name) || readElsewhere(name), name).toBe(true);
    });

    it("opens the port its health server or API listens on, and its probes use it", () => {
      const { container, config } = setup();
      const port = "port" in config ? config.port : (config as { healthPort: number }).healthPort;
      expect(container.ports).toHaveLength(1);
      const [{ name, containerPort }] = container.ports;
      expect(containerPort).toBe(port);
      // The port the image declares, too.
      expect(setting(stages, stageOf(container), "EXPOSE")).toBe(String(port));
      const probes = {
        liveness: container.livenessProbe,
        readiness: container.readinessProbe,
        startup: container.startupProbe,
      };
      for (const [kind, probe] of Object.entries(probes)) {
        expect(probe?.httpGet, `${kind} probe`).toBeDefined();
        expect([name, port], `${kind} probe port`).toContain(probe.httpGet.port);
      }
      // Alive is /healthz (no dependency: a broker outage must not restart every pod);
      // ready is /readyz (database and broker reachable).
      expect(probes.liveness.httpGet.path).toBe("/healthz");
      expect(probes.startup.httpGet.path).toBe("/healthz");
      expect(probes.readiness.httpGet.path).toBe("/readyz");
    });
  });

  it("gives the senders and the dispatcher the same ATTEMPT_TIMEOUT", () => {
    const sender = senderConfig(containerEnv(objects, serviceContainer(objects, "sender"), secrets));
    const dispatcher = dispatcherConfig(
      containerEnv(objects, serviceContainer(objects, "dispatcher"), secrets),
    );
    expect(sender.attemptTimeoutMs).toBe(dispatcher.attemptTimeoutMs);
    // Private destinations stay refused in a cluster.
    expect(sender.allowPrivateDestinations).toBe(false);
  });

  it("lets each service finish its work on SIGTERM before Kubernetes kills it", () => {
    expect(shutdownProblems(objects)).toEqual([]);
  });

  it("rolls out without taking a replica down first", () => {
    for (const deployment of ofKind(objects, "Deployment")) {
      expect(deployment.spec.strategy.rollingUpdate.maxUnavailable, deployment.metadata.name).toBe(0);
      // The autoscalers own the replica count: apply must not reset it.
      expect(deployment.spec.replicas, deployment.metadata.name).toBeUndefined();
    }
  });
});

describe.each(Object.keys(targets) as (keyof typeof targets)[])("the migration in %s", (target) => {
  const objects = render(target);
  const job = migrationJob(objects);
  const [migrate] = job.spec.template.spec.containers as Container[];

  it("is a Job running the migrate image's own command, applying", () => {
    expect(job.spec.template.spec.containers).toHaveLength(1);
    expect(imageParts(migrate!.image).name).toBe("migrate");
    expect(migrate!.command).toBeUndefined();
    expect(migrate!.args).toBeUndefined();
    const env = containerEnv(objects, migrate!, secrets);
    expect(env.MIGRATE_MODE).toBeUndefined();
    expect(env.DATABASE_URL).toMatch(/^postgresql:\/\/herald:sample@/);
    expect(job.spec.template.spec.restartPolicy).toMatch(/^(Never|OnFailure)$/);
    expect(job.spec.backoffLimit).toBeGreaterThan(0);
  });

  it("holds back every service that uses the database until the migrations are applied", () => {
    for (const service of ["api-gateway", "dispatcher"] as const) {
      const spec = find(objects, "Deployment", services[service].deployment).spec.template.spec;
      const wait = (spec.initContainers as Container[]).find((c) => c.name === "wait-for-migrations");
      expect(wait, service).toBeDefined();
      // Same image and version as the Job: it waits for the migrations this version ships.
      expect(wait!.image).toBe(migrate!.image);
      const env = containerEnv(objects, wait!, secrets);
      expect(env.MIGRATE_MODE).toBe("wait");
      // The same database the service itself uses, and the Job migrates.
      const own = containerEnv(objects, serviceContainer(objects, service), secrets);
      expect(env.DATABASE_URL).toBe(own.DATABASE_URL);
      expect(env.DATABASE_URL).toBe(containerEnv(objects, migrate!, secrets).DATABASE_URL);
    }
    // The senders never touch the database, so they do not wait.
    expect(find(objects, "Deployment", "herald-sender").spec.template.spec.initContainers).toBeUndefined();
  });
});

describe.each(overlays)("the %s overlay with a longer ATTEMPT_TIMEOUT", (overlay) => {
  const longer = (kustomization: string) =>
    kustomization.replace("    literals:\n", "    literals:\n      - ATTEMPT_TIMEOUT=60s\n");

  it("fails the grace check until the sender's grace period is raised with it", () => {
    const objects = renderEdited(overlay, longer);
    expect(
      senderConfig(containerEnv(objects, serviceContainer(objects, "sender"), secrets)).attemptTimeoutMs,
    ).toBe(60_000);
    expect(shutdownProblems(objects)).toEqual([
      "sender: terminationGracePeriodSeconds 45 s is not above ATTEMPT_TIMEOUT (60 s) + 15 s",
    ]);
    const raised = renderEdited(overlay, (k) =>
      longer(k).replace(
        "patches:\n",
        `patches:
  - target:
      kind: Deployment
      name: herald-sender
    patch: |-
      - op: replace
        path: /spec/template/spec/terminationGracePeriodSeconds
        value: 90
`,
      ),
    );
    expect(shutdownProblems(raised)).toEqual([]);
  });
});

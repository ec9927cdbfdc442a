import { execFileSync } from "node:child_process";
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parseAllDocuments } from "yaml";

/**
 * The Kubernetes manifests (deploy/) as the cluster would receive them: each overlay rendered
 * by `kubectl kustomize`, parsed into plain objects, and helpers to read them the way the
 * kubelet does (a container's environment from its ConfigMap and Secret references).
 */
export const root = join(import.meta.dirname, "..", "..");
export const deployDir = join(root, "deploy");

/** What `kubectl apply -k` is pointed at: both overlays, and the base alone (managed engines). */
export const targets = {
  base: "deploy/base",
  dev: "deploy/overlays/dev",
  production: "deploy/overlays/production",
} as const;
export type Target = keyof typeof targets;
export const overlays = ["dev", "production"] as const;

export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; [k: string]: unknown };
  // biome-ignore lint/suspicious/noExplicitAny: manifests are checked field by field in the tests
  spec?: any;
  // biome-ignore lint/suspicious/noExplicitAny: as above
  [k: string]: any;
};

function onPath(command: string): string | null {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    const candidate = join(dir, command);
    if (dir && existsSync(candidate)) return candidate;
  }
  return null;
}

/** Kustomize v5 (components, `labels`, `replacements`), embedded in kubectl 1.27 and later. */
const KUSTOMIZE_MAJOR = 5;
const HOW =
  "`npm test` installs it when it can (scripts/lib/setup.mjs, ensureKubectl); otherwise install kubectl 1.27 or later (https://kubernetes.io/docs/tasks/tools/install-kubectl-linux/) and put it on PATH";
let kubectl: string | null = null;

/**
 * The kubectl on PATH, checked to embed kustomize v5. Installing it is `npm test`'s job
 * (scripts/lib/setup.mjs); here a missing or older one fails the tests with what to do: they
 * never pass without rendering the manifests.
 */
export function kubectlPath(): string {
  if (kubectl) return kubectl;
  const found = onPath("kubectl");
  if (!found) throw new Error(`kubectl is not installed: ${HOW}`);
  const version = execFileSync(found, ["version", "--client"], { encoding: "utf8", stdio: "pipe" });
  const kustomize = /Kustomize Version: v(\d+)/.exec(version);
  if (!kustomize || Number(kustomize[1]) < KUSTOMIZE_MAJOR) {
    throw new Error(
      `${found} has ${kustomize ? `kustomize v${kustomize[1]}` : "no kustomize v4 or later"}; deploy/ needs kustomize v${KUSTOMIZE_MAJOR}. ${HOW}.\n${version}`,
    );
  }
  kubectl = found;
  return kubectl;
}

/** `kubectl kustomize <dir>`, parsed. Throws with kustomize's message when it cannot render. */
export function renderDir(dir: string): K8sObject[] {
  const out = execFileSync(kubectlPath(), ["kustomize", dir], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 64 * 1024 * 1024,
  });
  return parseAllDocuments(out).map((doc) => {
    if (doc.errors.length) throw new Error(`${dir}: ${doc.errors[0]!.message}`);
    return doc.toJS() as K8sObject;
  });
}

/**
 * An overlay as a user would change it: a copy of its files, the kustomization's text passed
 * through `edit`, rendered, then removed. (An overlay on top of ours would not do: the Job's
 * name is set in the kustomization that sets the images.)
 */
export function renderEdited(
  overlay: (typeof overlays)[number],
  edit: (kustomization: string) => string,
): K8sObject[] {
  const dir = join(
    root,
    "test-artifacts",
    `k8s-edited-${process.pid}-${Math.random().toString(36).slice(2)}`,
  );
  cpSync(join(root, targets[overlay]), dir, { recursive: true });
  try {
    const file = join(dir, "kustomization.yaml");
    const toDeploy = `${relative(dir, deployDir)}/`;
    const text = readFileSync(file, "utf8").replaceAll("../../", toDeploy);
    writeFileSync(file, edit(text));
    return renderDir(relative(root, dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const rendered = new Map<Target, K8sObject[]>();
export function render(target: Target): K8sObject[] {
  if (!rendered.has(target)) rendered.set(target, renderDir(targets[target]));
  return rendered.get(target)!;
}

export function find(objects: K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in the rendered manifests`);
  return found;
}

export function ofKind(objects: K8sObject[], kind: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind);
}

/** The migration Job: `herald-migrate`, or `herald-migrate-<tag>` where an overlay versions it. */
export function migrationJob(objects: K8sObject[]): K8sObject {
  const jobs = ofKind(objects, "Job").filter(
    (o) => o.metadata.labels?.["app.kubernetes.io/component"] === "migrate",
  );
  if (jobs.length !== 1) throw new Error(`expected one migration Job, found ${jobs.length}`);
  return jobs[0]!;
}

/** Herald's services, by the Deployment that runs each and its container. */
export const services = {
  "api-gateway": { deployment: "herald-api-gateway", container: "api-gateway" },
  dispatcher: { deployment: "herald-dispatcher", container: "dispatcher" },
  sender: { deployment: "herald-sender", container: "sender" },
} as const;
export type Service = keyof typeof services;

export type Container = {
  name: string;
  image: string;
  // biome-ignore lint/suspicious/noExplicitAny: checked field by field
  [k: string]: any;
};

/** Every pod template Herald renders (Deployments and the Job), with its owner. */
export function podTemplates(objects: K8sObject[]): { owner: K8sObject; spec: K8sObject["spec"] }[] {
  return objects
    .filter((o) => o.kind === "Deployment" || o.kind === "Job")
    .map((owner) => ({ owner, spec: owner.spec.template.spec }));
}

export function serviceContainer(objects: K8sObject[], service: Service): Container {
  const { deployment, container } = services[service];
  const spec = find(objects, "Deployment", deployment).spec.template.spec;
  const found = (spec.containers as Container[]).find((c) => c.name === container);
  if (!found) throw new Error(`Deployment ${deployment} has no container ${container}`);
  return found;
}

/** Values to stand in for the Secrets an operator creates (../../deploy/README.md, Install). */
export type SecretValues = Record<string, Record<string, string>>;

type EnvVar = {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    fieldRef?: { fieldPath: string };
  };
};

/**
 * A container's environment as the kubelet builds it: envFrom first, then env in order, with
 * `$(VAR)` references to earlier variables expanded. A reference to a ConfigMap that was not
 * rendered, or to a Secret or key not in `secrets`, throws (unless marked optional).
 */
export function containerEnv(
  objects: K8sObject[],
  container: Container,
  secrets: SecretValues,
): Record<string, string> {
  const env: Record<string, string> = {};
  const configMap = (name: string) => find(objects, "ConfigMap", name).data as Record<string, string>;
  const secret = (name: string, key: string, optional?: boolean): string | undefined => {
    const value = secrets[name]?.[key];
    if (value === undefined && !optional) throw new Error(`${container.name}: no Secret ${name} key ${key}`);
    return value;
  };
  for (const from of container.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, configMap(from.configMapRef.name));
    else if (from.secretRef) Object.assign(env, secrets[from.secretRef.name]);
    else throw new Error(`${container.name}: unknown envFrom ${JSON.stringify(from)}`);
  }
  for (const v of (container.env ?? []) as EnvVar[]) {
    let value: string | undefined;
    if (v.value !== undefined) {
      value = v.value.replace(/\$\((\w+)\)/g, (whole, name: string) => env[name] ?? whole);
    } else if (v.valueFrom?.secretKeyRef) {
      const ref = v.valueFrom.secretKeyRef;
      value = secret(ref.name, ref.key, ref.optional);
    } else if (v.valueFrom?.configMapKeyRef) {
      value = configMap(v.valueFrom.configMapKeyRef.name)[v.valueFrom.configMapKeyRef.key];
    } else if (v.valueFrom?.fieldRef) {
      value = `field:${v.valueFrom.fieldRef.fieldPath}`;
    } else {
      value = "";
    }
    if (value !== undefined) env[v.name] = value;
  }
  return env;
}

/** The Secrets every rendering may reference, with sample values of the right shape. */
export function sampleSecrets(encryptionKey: string): SecretValues {
  return {
    "herald-secrets": {
      ENCRYPTION_KEY: encryptionKey,
      ADMIN_TOKEN: "a-sample-admin-token-of-32-chars",
      AMQP_URL: "amqp://herald:sample@herald-rabbitmq.herald.svc:5672",
      DATABASE_URL: "postgresql://herald:sample@db.example.internal:5432/herald",
    },
    // Made by CloudNativePG for the Cluster herald-db (components/postgres).
    "herald-db-app": { uri: "postgresql://herald:sample@herald-db-rw.herald:5432/herald" },
  };
}

/**
 * Splits `registry/path/name:tag` into its parts. The registry is the first component when it
 * has a `.` or a `:` or is `localhost` (as Docker and containerd read it); otherwise there is
 * none, and the image comes from Docker Hub.
 */
export function imageParts(image: string): {
  registry: string | null;
  repository: string;
  name: string;
  tag: string | null;
} {
  const at = image.lastIndexOf(":");
  const hasTag = at > image.lastIndexOf("/");
  const repository = hasTag ? image.slice(0, at) : image;
  const [first, ...rest] = repository.split("/");
  const registry = rest.length && (/[.:]/.test(first!) || first === "localhost") ? first! : null;
  return {
    registry,
    repository,
    name: repository.split("/").pop()!,
    tag: hasTag ? image.slice(at + 1) : null,
  };
}

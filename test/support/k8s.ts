import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
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

let kubectl: string | null = null;

/**
 * kubectl with a kustomize that knows components and the `labels` field (v5, kubectl 1.27 or
 * later). Missing, it is installed from Debian's `kubernetes-client`; when that cannot be done,
 * or gives an older kubectl (bookworm's is 1.20), the error says so: these tests never pass
 * without rendering the manifests.
 */
export function ensureKubectl(): string {
  if (kubectl) return kubectl;
  let found = onPath("kubectl");
  if (!found) {
    try {
      const apt = { stdio: "pipe" as const, env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } };
      execFileSync("apt-get", ["update"], apt);
      execFileSync("apt-get", ["install", "-y", "--no-install-recommends", "kubernetes-client"], apt);
    } catch (err) {
      throw new Error(
        `kubectl is not installed and installing Debian's kubernetes-client failed (run \`apt-get install kubernetes-client\` as root, or install kubectl 1.27 or later): ${(err as Error).message}`,
      );
    }
    found = onPath("kubectl");
    if (!found) throw new Error("kubernetes-client was installed but kubectl is not on PATH");
  }
  const version = execFileSync(found, ["version", "--client"], { encoding: "utf8", stdio: "pipe" });
  const kustomize = /Kustomize Version: v(\d+)/.exec(version);
  if (!kustomize || Number(kustomize[1]) < 5) {
    throw new Error(
      `${found} has kustomize ${kustomize ? `v${kustomize[1]}` : "older than v4"}; deploy/ needs kustomize v5 (kubectl 1.27 or later):\n${version}`,
    );
  }
  kubectl = found;
  return kubectl;
}

/** `kubectl kustomize <dir>`, parsed. Throws with kustomize's message when it cannot render. */
export function renderDir(dir: string): K8sObject[] {
  const out = execFileSync(ensureKubectl(), ["kustomize", dir], {
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

/** Splits `registry/path/name:tag` into repository and tag. */
export function imageParts(image: string): { repository: string; name: string; tag: string | null } {
  const at = image.lastIndexOf(":");
  const hasTag = at > image.lastIndexOf("/");
  const repository = hasTag ? image.slice(0, at) : image;
  return { repository, name: repository.split("/").pop()!, tag: hasTag ? image.slice(at + 1) : null };
}

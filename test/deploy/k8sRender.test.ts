import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Cluster } from "@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1";
import * as keda from "@kubernetes-models/keda/keda.sh/v1alpha1";
import * as apps from "kubernetes-models/apps/v1";
import * as autoscaling from "kubernetes-models/autoscaling/v2";
import * as batch from "kubernetes-models/batch/v1";
import * as networking from "kubernetes-models/networking.k8s.io/v1";
import * as policy from "kubernetes-models/policy/v1";
import * as core from "kubernetes-models/v1";
import { afterAll, describe, expect, it } from "vitest";
import {
  type K8sObject,
  migrationJob,
  ofKind,
  overlays,
  render,
  renderDir,
  root,
  targets,
} from "../support/k8s.ts";
import { validateRabbitmqCluster } from "../support/rabbitmqClusterSchema.ts";

/**
 * Every kustomization under deploy/ renders with `kubectl kustomize`, and every object it
 * makes validates against its schema: the Kubernetes API's (kubernetes-models), KEDA's and
 * CloudNativePG's model packages, and for RabbitmqCluster a schema taken from the operator's
 * CRD (test/support/rabbitmqClusterSchema.ts).
 */
type Validator = (object: K8sObject) => void;
type Models = Record<string, unknown>;
const groups: Record<string, Models> = {
  v1: core,
  "apps/v1": apps,
  "batch/v1": batch,
  "networking.k8s.io/v1": networking,
  "policy/v1": policy,
  "autoscaling/v2": autoscaling,
  "keda.sh/v1alpha1": keda,
};

function validatorFor(object: K8sObject): Validator {
  const { apiVersion, kind } = object;
  if (apiVersion === "rabbitmq.com/v1beta1" && kind === "RabbitmqCluster") return validateRabbitmqCluster;
  if (apiVersion === "postgresql.cnpg.io/v1" && kind === "Cluster")
    return (o) => new Cluster(o as ConstructorParameters<typeof Cluster>[0]).validate();
  const Model = groups[apiVersion]?.[kind] as (new (data: unknown) => { validate(): void }) | undefined;
  if (!Model) throw new Error(`no schema for ${apiVersion} ${kind}`);
  return (o) => new Model(o).validate();
}

function problems(objects: K8sObject[]): string[] {
  const found: string[] = [];
  for (const object of objects) {
    try {
      validatorFor(object)(object);
    } catch (err) {
      found.push(`${object.kind} ${object.metadata?.name}: ${(err as Error).message}`);
    }
  }
  return found;
}

/**
 * The model packages' validators accept fields they do not know, which the API server refuses
 * (kubectl applies with strict field validation). Their TypeScript types do not: each object is
 * written as a literal of its model's type and checked by tsc, whose excess-property check
 * names any misspelt or misplaced field. (RabbitmqCluster's schema refuses unknown fields itself.)
 */
const typeModules: Record<string, string> = {
  v1: "kubernetes-models/v1",
  "apps/v1": "kubernetes-models/apps/v1",
  "batch/v1": "kubernetes-models/batch/v1",
  "networking.k8s.io/v1": "kubernetes-models/networking.k8s.io/v1",
  "policy/v1": "kubernetes-models/policy/v1",
  "autoscaling/v2": "kubernetes-models/autoscaling/v2",
  "keda.sh/v1alpha1": "@kubernetes-models/keda/keda.sh/v1alpha1",
  "postgresql.cnpg.io/v1": "@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1",
};
const scratch = join(root, "test-artifacts", `k8s-fields-${process.pid}`);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function unknownFields(objects: K8sObject[], label: string): string[] {
  const dir = join(scratch, label);
  mkdirSync(dir, { recursive: true });
  const imports: string[] = [];
  const body: string[] = [];
  const owners: { line: number; name: string }[] = [];
  objects.forEach((object, i) => {
    if (object.apiVersion === "rabbitmq.com/v1beta1") return;
    const module = typeModules[object.apiVersion];
    if (!module) throw new Error(`no types for ${object.apiVersion}`);
    imports.push(`import type { I${object.kind} as T${i} } from "${module}";`);
    owners.push({ line: body.length + 1, name: `${object.kind} ${object.metadata.name}` });
    body.push(...`export const o${i}: T${i} = ${JSON.stringify(object, null, 1)};`.split("\n"));
  });
  writeFileSync(join(dir, "objects.ts"), `${[...imports, ...body].join("\n")}\n`);
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      extends: "../../../tsconfig.base.json",
      compilerOptions: { types: [] },
      include: ["objects.ts"],
    }),
  );
  try {
    execFileSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", dir], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    return [];
  } catch (err) {
    const output = String((err as { stdout?: string }).stdout ?? err);
    return output
      .split("\n")
      .filter((l) => l.includes("error TS"))
      .map((l) => {
        const line = Number(/\((\d+),/.exec(l)?.[1] ?? 0) - imports.length;
        const owner = owners.filter((o) => o.line <= line).pop();
        return `${owner?.name ?? "?"}: ${l.replace(/^.*error TS\d+: /, "").slice(0, 160)}`;
      });
  }
}

describe.each(Object.keys(targets) as (keyof typeof targets)[])("kubectl kustomize %s", (target) => {
  const objects = render(target);

  it("renders Herald's objects, each once, all in the herald namespace", () => {
    const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(new Set(names).size).toBe(names.length);
    for (const name of [
      "Namespace/herald",
      "Deployment/herald-api-gateway",
      "Deployment/herald-dispatcher",
      "Deployment/herald-sender",
      "Service/herald-api-gateway",
      "Ingress/herald-api-gateway",
      "HorizontalPodAutoscaler/herald-api-gateway",
      "ScaledObject/herald-sender",
      "ScaledObject/herald-dispatcher",
      "TriggerAuthentication/herald-rabbitmq",
    ])
      expect(names).toContain(name);
    expect(ofKind(objects, "ConfigMap")).toHaveLength(1);
    expect(migrationJob(objects).metadata.name).toMatch(/^herald-migrate(-|$)/);
    for (const o of objects.filter((o) => o.kind !== "Namespace"))
      expect(o.metadata.namespace, o.kind).toBe("herald");
  });

  it("validates every object against its schema", async () => {
    expect(problems(objects)).toEqual([]);
  });

  it("uses no field the schemas do not know (as `kubectl apply` refuses them)", () => {
    expect(unknownFields(objects, target)).toEqual([]);
  });

  it("commits no Secret: the manifests only reference them", () => {
    expect(ofKind(objects, "Secret")).toEqual([]);
  });
});

describe.each(overlays)("the %s overlay", (overlay) => {
  const objects = render(overlay);

  it("runs RabbitMQ and PostgreSQL through their operators", () => {
    expect(ofKind(objects, "RabbitmqCluster").map((o) => o.metadata.name)).toEqual(["herald-rabbitmq"]);
    expect(ofKind(objects, "Cluster").map((o) => o.metadata.name)).toEqual(["herald-db"]);
  });
});

describe("the validation", () => {
  // The checks above must be able to fail: broken objects of each family are refused.
  const deployment = () => structuredClone(render("production").find((o) => o.kind === "Deployment")!);

  it("refuses a Deployment with a field of the wrong type", async () => {
    const broken = deployment();
    broken.spec.template.spec.containers[0].securityContext.runAsUser = "node";
    expect(problems([broken]).join()).toContain("runAsUser");
  });

  it("refuses a ScaledObject without triggers, a Cluster with a string for instances", async () => {
    const scaled = structuredClone(render("production").find((o) => o.kind === "ScaledObject")!);
    delete scaled.spec.triggers;
    const cluster = structuredClone(render("production").find((o) => o.kind === "Cluster")!);
    cluster.spec.instances = "three";
    const found = problems([scaled, cluster]);
    expect(found).toHaveLength(2);
  });

  it("refuses a RabbitmqCluster with an unknown field or an oversized config", async () => {
    const rabbit = structuredClone(render("production").find((o) => o.kind === "RabbitmqCluster")!);
    rabbit.spec.replica = 3;
    const long = structuredClone(render("production").find((o) => o.kind === "RabbitmqCluster")!);
    long.spec.rabbitmq.additionalConfig = "x".repeat(2001);
    expect(problems([rabbit, long])).toHaveLength(2);
  });

  it("names a misspelt field", () => {
    const broken = deployment();
    broken.spec.template.spec.containers[0].securityContext.readOnlyRootFilesytem = true;
    const found = unknownFields([broken], "misspelt");
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^Deployment herald-.*readOnlyRootFilesytem/);
  });

  it("refuses an object of a kind it has no schema for", async () => {
    const unknown = { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" } };
    expect(problems([unknown])).toEqual(["Widget w: no schema for example.com/v1 Widget"]);
  });

  it("fails when kustomize cannot render", () => {
    expect(() => renderDir("deploy/does-not-exist")).toThrow();
  });
});

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { deployDir } from "../support/k8s.ts";
import { RABBITMQ_CLUSTER_OPERATOR } from "../support/rabbitmqClusterSchema.ts";

/**
 * deploy/README.md's instructions against what the tests check: the operators it installs are
 * the versions whose schemas validate the manifests, and its install steps run in an order
 * that works (the Secret before the apply, the RabbitMQ user once the cluster runs).
 */
const readme = readFileSync(join(deployDir, "README.md"), "utf8");
const install = readme.slice(readme.indexOf("### Install"), readme.indexOf("### Upgrade"));
const cnpgModels = createRequire(import.meta.url)("@kubernetes-models/cloudnative-pg/package.json") as {
  "crd-generate": { input: string[] };
};

describe("deploy/README.md", () => {
  it("installs the operators at the versions the manifests are validated against, never `latest`", () => {
    expect(install).toContain(
      `https://github.com/rabbitmq/cluster-operator/releases/download/${RABBITMQ_CLUSTER_OPERATOR}/cluster-operator.yml`,
    );
    const [cnpg] = cnpgModels["crd-generate"].input;
    expect(cnpg).toMatch(/cloudnative-pg\/releases\/download\/v[\d.]+\/cnpg-[\d.]+\.yaml$/);
    expect(install).toContain(cnpg);
    for (const url of readme.match(/https?:\/\/\S+/g) ?? []) expect(url).not.toMatch(/\/latest\//);
  });

  it("creates the Secret before applying, and the RabbitMQ user once the cluster runs", () => {
    const at = (text: string) => {
      const index = install.indexOf(text);
      expect(index, text).toBeGreaterThanOrEqual(0);
      return index;
    };
    const secret = at("kubectl -n herald create secret generic herald-secrets");
    const namespace = at("kubectl apply -f deploy/base/namespace.yaml");
    const apply = at("kubectl apply -k deploy/overlays/production");
    const wait = at("kubectl -n herald wait rabbitmqcluster/herald-rabbitmq");
    const user = at("rabbitmqctl add_user herald");
    expect(namespace).toBeLessThan(secret);
    expect(secret).toBeLessThan(apply);
    expect(apply).toBeLessThan(wait);
    expect(wait).toBeLessThan(user);
    // The user's password is the one the Secret's AMQP_URL carries.
    expect(install).toContain("AMQP_URL=amqp://herald:$RMQ_PASSWORD@");
    expect(install).toContain('add_user herald "$RMQ_PASSWORD"');
  });

  it("says how to re-run a failed migration Job, and asks for no tool it does not list", () => {
    expect(install).toMatch(/kubectl -n herald delete job herald-migrate-<version>/);
    if (readme.includes("kustomize edit")) expect(readme).toMatch(/standalone kustomize/);
  });
});

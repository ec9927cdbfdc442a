import { Ajv } from "ajv";
import { Pod } from "kubernetes-models/v1";
import type { K8sObject } from "./k8s.ts";

/**
 * RabbitmqCluster (rabbitmq.com/v1beta1) has no model package, so its fields that deploy/ uses
 * are checked against this schema, copied from the operator's CRD
 * (config/crd/bases/rabbitmq.com_rabbitmqclusters.yaml in rabbitmq/cluster-operator): types,
 * patterns, limits and enums as there. Unlike the CRD it refuses fields it does not list, so a
 * field added to the manifests must be added here from the CRD first. `affinity` and
 * `tolerations` are the core types, checked with kubernetes-models. deploy/README.md installs
 * the operator at RABBITMQ_CLUSTER_OPERATOR (test/deploy/k8sReadme.test.ts keeps the two in
 * step): check a new version's CRD for these fields before changing it.
 */
export const RABBITMQ_CLUSTER_OPERATOR = "v2.12.0";
const quantity = {
  anyOf: [{ type: "integer" }, { type: "string" }],
  pattern:
    "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
};

export const rabbitmqClusterSchema = {
  type: "object",
  required: ["apiVersion", "kind", "metadata", "spec"],
  additionalProperties: false,
  properties: {
    apiVersion: { const: "rabbitmq.com/v1beta1" },
    kind: { const: "RabbitmqCluster" },
    metadata: {
      type: "object",
      required: ["name"],
      properties: { name: { type: "string", pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", maxLength: 63 } },
    },
    spec: {
      type: "object",
      additionalProperties: false,
      properties: {
        replicas: { type: "integer", minimum: 0, maximum: 2147483647 },
        image: { type: "string" },
        resources: {
          type: "object",
          additionalProperties: false,
          properties: {
            limits: { type: "object", additionalProperties: quantity },
            requests: { type: "object", additionalProperties: quantity },
          },
        },
        persistence: {
          type: "object",
          additionalProperties: false,
          properties: { storage: quantity, storageClassName: { type: "string" } },
        },
        rabbitmq: {
          type: "object",
          additionalProperties: false,
          properties: {
            additionalConfig: { type: "string", maxLength: 2000 },
            additionalPlugins: {
              type: "array",
              maxItems: 100,
              items: { type: "string", maxLength: 100, pattern: "^\\w+$" },
            },
            advancedConfig: { type: "string", maxLength: 100000 },
            envConfig: { type: "string", maxLength: 100000 },
          },
        },
        service: {
          type: "object",
          additionalProperties: false,
          properties: {
            type: { enum: ["ClusterIP", "LoadBalancer", "NodePort"] },
            annotations: { type: "object", additionalProperties: { type: "string" } },
          },
        },
        terminationGracePeriodSeconds: { type: "integer", minimum: 0 },
        skipPostDeploySteps: { type: "boolean" },
        affinity: { type: "object" },
        tolerations: { type: "array" },
      },
    },
  },
};

const validateSchema = new Ajv({ allErrors: true, strict: false }).compile(rabbitmqClusterSchema);

/** Throws with every problem found. */
export function validateRabbitmqCluster(object: K8sObject): void {
  if (!validateSchema(object)) {
    throw new Error(validateSchema.errors!.map((e) => `${e.instancePath || "/"} ${e.message}`).join("; "));
  }
  const { affinity, tolerations } = object.spec;
  if (affinity || tolerations) {
    new Pod({
      metadata: { name: "affinity-check" },
      spec: { containers: [{ name: "c" }], affinity, tolerations },
    }).validate();
  }
}

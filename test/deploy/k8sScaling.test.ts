import { topologyNames } from "@herald/broker";
import { describe, expect, it } from "vitest";
import { find, type K8sObject, ofKind, overlays, render, serviceContainer, targets } from "../support/k8s.ts";

/**
 * Scaling and disruption: KEDA watches the queues Herald really declares (packages/broker's
 * topology under the configured prefix) with the broker URL the services use; the autoscalers
 * and disruption budgets select the pods they mean to; PostgreSQL takes as many connections as
 * the replicas can open; the engines keep a quorum.
 */
function configMap(objects: K8sObject[]): Record<string, string> {
  const [config] = ofKind(objects, "ConfigMap");
  return config!.data;
}

function selects(
  selector: { matchLabels?: Record<string, string> },
  labels: Record<string, string>,
): boolean {
  return Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
}

describe.each(Object.keys(targets) as (keyof typeof targets)[])("scaling in %s", (target) => {
  const objects = render(target);
  const queues = topologyNames(configMap(objects).AMQP_PREFIX ?? "herald").queues;

  it("scales the senders on their lanes' queues and the dispatcher on its own queues", () => {
    const queueOf = (name: string) =>
      find(objects, "ScaledObject", name).spec.triggers.map(
        (t: { metadata: { queueName: string } }) => t.metadata.queueName,
      );
    expect(queueOf("herald-sender")).toEqual([
      queues.senderAttempts,
      queues.senderBacklog,
      queues.senderLarge,
    ]);
    const dispatcherQueues = queueOf("herald-dispatcher");
    for (const queue of [
      queues.dispatcherEvents,
      queues.dispatcherEventBatches,
      queues.dispatcherResults,
      queues.dispatcherResultBatches,
    ])
      expect(dispatcherQueues).toContain(queue);
    const own = [
      queues.dispatcherEvents,
      queues.dispatcherEventBatches,
      queues.dispatcherResults,
      queues.dispatcherResultBatches,
      queues.dispatcherRetries,
      queues.dispatcherControl,
    ];
    for (const queue of dispatcherQueues) expect(own).toContain(queue);
  });

  it("reads queue lengths over AMQP with the broker URL the services use", () => {
    const serviceUrl = serviceContainer(objects, "sender").env.find(
      (v: { name: string }) => v.name === "AMQP_URL",
    ).valueFrom.secretKeyRef;
    for (const scaled of ofKind(objects, "ScaledObject")) {
      const where = scaled.metadata.name;
      const deployment = find(objects, "Deployment", scaled.spec.scaleTargetRef.name);
      expect(deployment.kind).toBe("Deployment");
      expect(scaled.spec.minReplicaCount, where).toBeGreaterThanOrEqual(1);
      expect(scaled.spec.maxReplicaCount, where).toBeGreaterThanOrEqual(scaled.spec.minReplicaCount);
      for (const trigger of scaled.spec.triggers) {
        expect(trigger.type).toBe("rabbitmq");
        expect(trigger.metadata).toMatchObject({ protocol: "amqp", mode: "QueueLength" });
        expect(Number(trigger.metadata.value)).toBeGreaterThan(0);
        expect(trigger.metadata.host, "the URL holds a password: only through the Secret").toBeUndefined();
        const auth = find(objects, "TriggerAuthentication", trigger.authenticationRef.name);
        expect(auth.spec.secretTargetRef).toEqual([{ parameter: "host", ...serviceUrl }]);
      }
    }
  });

  it("scales the gateway on CPU, which its containers request", () => {
    const hpa = find(objects, "HorizontalPodAutoscaler", "herald-api-gateway");
    expect(hpa.spec.scaleTargetRef).toEqual({
      apiVersion: "apps/v1",
      kind: "Deployment",
      name: "herald-api-gateway",
    });
    expect(hpa.spec.metrics).toEqual([
      {
        type: "Resource",
        resource: { name: "cpu", target: { type: "Utilization", averageUtilization: expect.any(Number) } },
      },
    ]);
    expect(hpa.spec.maxReplicas).toBeGreaterThanOrEqual(hpa.spec.minReplicas);
    expect(serviceContainer(objects, "api-gateway").resources.requests.cpu).toBeDefined();
    // Nothing else scales the gateway, and nothing scales the others on CPU.
    expect(ofKind(objects, "HorizontalPodAutoscaler")).toHaveLength(1);
  });

  it("has one disruption budget per Deployment, selecting its pods", () => {
    const budgets = ofKind(objects, "PodDisruptionBudget");
    for (const owner of ofKind(objects, "Deployment")) {
      const labels = owner.spec.template.metadata.labels;
      const matching = budgets.filter((b) => selects(b.spec.selector, labels));
      expect(
        matching.map((b) => b.metadata.name),
        owner.metadata.name,
      ).toEqual([owner.metadata.name]);
      expect(matching[0]!.spec.maxUnavailable, owner.metadata.name).toBeDefined();
      expect(selects(owner.spec.selector, labels)).toBe(true);
    }
  });
});

describe.each(overlays)("the engines of the %s overlay", (overlay) => {
  const objects = render(overlay);
  const db = find(objects, "Cluster", "herald-db");
  const rabbit = find(objects, "RabbitmqCluster", "herald-rabbitmq");
  const production = overlay === "production";

  it("keep a quorum: 3 RabbitMQ nodes and 3 PostgreSQL instances in production, 1 in dev", () => {
    expect(rabbit.spec.replicas).toBe(production ? 3 : 1);
    expect(db.spec.instances).toBe(production ? 3 : 1);
    // A synchronous commit needs that many replicas up: fewer than there are, or none.
    const sync = db.spec.postgresql.synchronous;
    if (production) expect(sync.number).toBeLessThan(db.spec.instances);
    else expect(sync).toBeUndefined();
    // RabbitMQ is drained one node at a time, keeping a majority of every quorum queue.
    const budget = find(objects, "PodDisruptionBudget", "herald-rabbitmq");
    expect(budget.spec.selector.matchLabels).toEqual({ "app.kubernetes.io/name": "herald-rabbitmq" });
    expect(budget.spec.maxUnavailable).toBeLessThanOrEqual(
      Math.max(1, Math.floor((rabbit.spec.replicas - 1) / 2)),
    );
  });

  it("let PostgreSQL take every connection the gateways and dispatchers can open", () => {
    const pool = Number(configMap(objects).DATABASE_POOL_SIZE);
    const gateways = find(objects, "HorizontalPodAutoscaler", "herald-api-gateway").spec.maxReplicas;
    const dispatchers = find(objects, "ScaledObject", "herald-dispatcher").spec.maxReplicaCount;
    // Each process holds one pool of DATABASE_POOL_SIZE; one surge pod of each during a
    // rollout; the migration and CloudNativePG's own connections.
    const needed = (gateways + dispatchers + 2) * pool + 10;
    expect(Number(db.spec.postgresql.parameters.max_connections)).toBeGreaterThanOrEqual(needed);
  });

  it("create the database Herald's DATABASE_URL names, owned by the user in it", () => {
    expect(db.spec.bootstrap.initdb).toEqual({ database: "herald", owner: "herald" });
  });
});

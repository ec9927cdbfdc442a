import { describe, expect, it } from "vitest";
import { find, type K8sObject, ofKind, overlays, render, targets } from "../support/k8s.ts";

/**
 * The NetworkPolicies, evaluated as a cluster's network plugin would for the connections that
 * matter: who can reach the gateway, the workers, RabbitMQ and PostgreSQL, and where Herald's
 * pods may connect to. The engines' pods carry the labels their operators give them.
 */
type Labels = Record<string, string>;
type Selector = {
  matchLabels?: Labels;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
};
type Peer = {
  podSelector?: Selector;
  namespaceSelector?: Selector;
  ipBlock?: { cidr: string; except?: string[] };
};
type PortRule = { port?: number | string; protocol?: string };
type Pod = { name: string; namespace: string; labels: Labels; ports: Record<string, number> };
type Destination = { pod: Pod } | { ip: string };

function matches(selector: Selector, labels: Labels): boolean {
  const exact = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  return (
    exact &&
    (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
      if (operator === "In") return values.includes(labels[key]!);
      if (operator === "NotIn") return !values.includes(labels[key]!);
      if (operator === "Exists") return key in labels;
      if (operator === "DoesNotExist") return !(key in labels);
      throw new Error(`operator ${operator}`);
    })
  );
}

const namespaceLabels = (name: string): Labels => ({ "kubernetes.io/metadata.name": name });

function ipv4(ip: string): number {
  return ip.split(".").reduce((n, part) => n * 256 + Number(part), 0);
}
function inCidr(ip: string, cidr: string): boolean {
  if (cidr.includes(":") || ip.includes(":"))
    return cidr.includes(":") === ip.includes(":") && cidr === "::/0";
  const [base, bits] = cidr.split("/");
  const size = 2 ** (32 - Number(bits));
  return Math.floor(ipv4(ip) / size) === Math.floor(ipv4(base!) / size);
}

function peerMatches(peer: Peer, from: Pod | { ip: string }, policyNamespace: string): boolean {
  if (peer.ipBlock) {
    if (!("ip" in from)) return false;
    return inCidr(from.ip, peer.ipBlock.cidr) && !(peer.ipBlock.except ?? []).some((c) => inCidr(from.ip, c));
  }
  if (!("labels" in from)) return false;
  const namespaceOk = peer.namespaceSelector
    ? matches(peer.namespaceSelector, namespaceLabels(from.namespace))
    : from.namespace === policyNamespace;
  return namespaceOk && (!peer.podSelector || matches(peer.podSelector, from.labels));
}

function portMatches(rules: PortRule[] | undefined, port: number, target: Pod | null): boolean {
  if (!rules?.length) return true;
  return rules.some(
    (r) =>
      (r.protocol ?? "TCP") === "TCP" &&
      (r.port === undefined ||
        r.port === port ||
        (typeof r.port === "string" && target?.ports[r.port] === port)),
  );
}

function selecting(policies: K8sObject[], pod: Pod, type: "Ingress" | "Egress"): K8sObject[] {
  return policies.filter(
    (p) =>
      p.metadata.namespace === pod.namespace &&
      (p.spec.policyTypes ?? ["Ingress"]).includes(type) &&
      matches(p.spec.podSelector, pod.labels),
  );
}

/** May `from` open a TCP connection to `to` on `port`? */
function ingressAllowed(policies: K8sObject[], from: Pod, to: Pod, port: number): boolean {
  const applying = selecting(policies, to, "Ingress");
  if (!applying.length) return true;
  return applying.some((p) =>
    (p.spec.ingress ?? []).some(
      (rule: { from?: Peer[]; ports?: PortRule[] }) =>
        (!rule.from?.length || rule.from.some((peer) => peerMatches(peer, from, to.namespace))) &&
        portMatches(rule.ports, port, to),
    ),
  );
}

function egressAllowed(policies: K8sObject[], from: Pod, to: Destination, port: number): boolean {
  const applying = selecting(policies, from, "Egress");
  if (!applying.length) return true;
  const target = "pod" in to ? to.pod : to;
  return applying.some((p) =>
    (p.spec.egress ?? []).some(
      (rule: { to?: Peer[]; ports?: PortRule[] }) =>
        (!rule.to?.length || rule.to.some((peer) => peerMatches(peer, target, from.namespace))) &&
        portMatches(rule.ports, port, "pod" in to ? to.pod : null),
    ),
  );
}

function heraldPods(objects: K8sObject[]): Record<string, Pod> {
  const pods: Record<string, Pod> = {};
  for (const owner of objects.filter((o) => o.kind === "Deployment" || o.kind === "Job")) {
    const template = owner.spec.template;
    const ports: Record<string, number> = {};
    for (const c of template.spec.containers)
      for (const p of c.ports ?? []) if (p.name) ports[p.name] = p.containerPort;
    pods[template.metadata.labels["app.kubernetes.io/component"]] = {
      name: owner.metadata.name,
      namespace: owner.metadata.namespace!,
      labels: template.metadata.labels,
      ports,
    };
  }
  return pods;
}

const outside = (namespace: string, labels: Labels = {}): Pod => ({
  name: namespace,
  namespace,
  labels,
  ports: {},
});

describe.each(Object.keys(targets) as (keyof typeof targets)[])("the network policies of %s", (target) => {
  const objects = render(target);
  const policies = ofKind(objects, "NetworkPolicy");
  const pods = heraldPods(objects);
  const { "api-gateway": gateway, dispatcher, sender, migrate } = pods as Record<string, Pod>;
  const ingressController = outside("ingress-nginx", { "app.kubernetes.io/name": "ingress-nginx" });
  const stranger = outside("default", { app: "anything" });
  const prometheus = outside("monitoring", { "app.kubernetes.io/name": "prometheus" });

  it("deny every connection into the namespace by default", () => {
    const denyAll = find(objects, "NetworkPolicy", "herald-default-deny-ingress");
    expect(denyAll.spec).toEqual({ podSelector: {}, policyTypes: ["Ingress"] });
    const somePod = outside("herald", { "no-policy": "selects-me" });
    expect(ingressAllowed(policies, stranger, somePod, 80)).toBe(false);
  });

  it("let only the ingress controller reach a service from outside: the gateway's API port", () => {
    expect(ingressAllowed(policies, ingressController, gateway!, 8080)).toBe(true);
    expect(ingressAllowed(policies, ingressController, gateway!, 9999)).toBe(false);
    for (const pod of [dispatcher!, sender!]) {
      for (const port of Object.values(pod.ports)) {
        expect(ingressAllowed(policies, ingressController, pod, port), pod.name).toBe(false);
      }
    }
    for (const pod of [gateway!, dispatcher!, sender!]) {
      for (const port of [...Object.values(pod.ports), 22, 80]) {
        expect(ingressAllowed(policies, stranger, pod, port), `${pod.name}:${port}`).toBe(false);
      }
    }
  });

  it("let Prometheus scrape each service's metrics port, and nothing else reach the workers", () => {
    expect(ingressAllowed(policies, prometheus, gateway!, 8080)).toBe(true);
    expect(ingressAllowed(policies, prometheus, dispatcher!, 8081)).toBe(true);
    expect(ingressAllowed(policies, prometheus, sender!, 8082)).toBe(true);
    // Not even Herald's own pods call the workers.
    expect(ingressAllowed(policies, gateway!, dispatcher!, 8081)).toBe(false);
    expect(ingressAllowed(policies, dispatcher!, sender!, 8082)).toBe(false);
  });

  it("let the senders call public addresses on any port, and no private or metadata address", () => {
    for (const port of [443, 80, 8443]) {
      expect(egressAllowed(policies, sender!, { ip: "93.184.216.34" }, port), `public:${port}`).toBe(true);
    }
    for (const ip of [
      "169.254.169.254",
      "10.1.2.3",
      "172.20.0.1",
      "192.168.1.1",
      "127.0.0.1",
      "100.64.0.1",
    ]) {
      expect(egressAllowed(policies, sender!, { ip }, 80), ip).toBe(false);
      expect(egressAllowed(policies, sender!, { ip }, 443), ip).toBe(false);
    }
  });

  it("let every Herald pod reach DNS, the database and the broker, and nothing else outside", () => {
    for (const pod of [gateway!, dispatcher!, sender!, migrate!]) {
      for (const port of [53, 5432, 5672])
        expect(egressAllowed(policies, pod, { ip: "10.0.0.10" }, port)).toBe(true);
    }
    for (const pod of [gateway!, dispatcher!, migrate!]) {
      expect(egressAllowed(policies, pod, { ip: "93.184.216.34" }, 443), pod.name).toBe(false);
    }
  });
});

describe.each(overlays)("the engines' network policies in the %s overlay", (overlay) => {
  const objects = render(overlay);
  const policies = ofKind(objects, "NetworkPolicy");
  const pods = heraldPods(objects);
  const rabbit: Pod = {
    name: "herald-rabbitmq-server-0",
    namespace: "herald",
    labels: {
      "app.kubernetes.io/name": "herald-rabbitmq",
      "app.kubernetes.io/component": "rabbitmq",
      "app.kubernetes.io/part-of": "rabbitmq",
    },
    ports: { amqp: 5672, management: 15672, prometheus: 15692, epmd: 4369, cluster: 25672 },
  };
  const postgres: Pod = {
    name: "herald-db-1",
    namespace: "herald",
    labels: { "cnpg.io/cluster": "herald-db", "cnpg.io/instanceRole": "primary" },
    ports: { postgresql: 5432, status: 8000, metrics: 9187 },
  };

  it("let Herald's pods and KEDA reach RabbitMQ over AMQP, its nodes each other, the operator its API", () => {
    for (const pod of Object.values(pods))
      expect(ingressAllowed(policies, pod, rabbit, 5672), pod.name).toBe(true);
    expect(ingressAllowed(policies, outside("keda"), rabbit, 5672)).toBe(true);
    expect(ingressAllowed(policies, rabbit, rabbit, 25672)).toBe(true);
    expect(ingressAllowed(policies, rabbit, rabbit, 4369)).toBe(true);
    expect(ingressAllowed(policies, outside("rabbitmq-system"), rabbit, 15672)).toBe(true);
    expect(ingressAllowed(policies, outside("ingress-nginx"), rabbit, 15672)).toBe(false);
    expect(ingressAllowed(policies, outside("default"), rabbit, 5672)).toBe(false);
  });

  it("let only the pods that use the database reach PostgreSQL, with its replicas and operator", () => {
    for (const component of ["api-gateway", "dispatcher", "migrate"]) {
      expect(ingressAllowed(policies, pods[component]!, postgres, 5432), component).toBe(true);
    }
    expect(ingressAllowed(policies, pods.sender!, postgres, 5432)).toBe(false);
    expect(ingressAllowed(policies, postgres, postgres, 5432)).toBe(true);
    expect(ingressAllowed(policies, outside("cnpg-system"), postgres, 8000)).toBe(true);
    expect(ingressAllowed(policies, outside("keda"), postgres, 5432)).toBe(false);
    expect(ingressAllowed(policies, outside("default"), postgres, 5432)).toBe(false);
  });
});

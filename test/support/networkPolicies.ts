import { BlockList, isIP } from "node:net";
import type { K8sObject } from "./k8s.ts";

/**
 * NetworkPolicies evaluated as a cluster's network plugin does: a pod selected by no policy of
 * a direction is open in that direction; a selected one admits only what some rule of those
 * policies allows. Pods are matched by label selectors, addresses outside the cluster by
 * ipBlocks (IPv4 and IPv6, with their exceptions).
 */
export type Labels = Record<string, string>;
type Selector = {
  matchLabels?: Labels;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
};
type Peer = {
  podSelector?: Selector;
  namespaceSelector?: Selector;
  ipBlock?: { cidr: string; except?: string[] };
};
type PortRule = { port?: number | string; endPort?: number; protocol?: string };
export type Pod = { name: string; namespace: string; labels: Labels; ports: Record<string, number> };
export type Destination = { pod: Pod } | { ip: string };
export type Protocol = "TCP" | "UDP";

export function matches(selector: Selector, labels: Labels): boolean {
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

/** Is `ip` in `cidr`? Either may be IPv4 or IPv6; an address is never in a block of the other family. */
export function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split("/");
  const family = isIP(base!);
  if (!family || bits === undefined) throw new Error(`not a CIDR: ${cidr}`);
  if (!isIP(ip)) throw new Error(`not an IP address: ${ip}`);
  if (isIP(ip) !== family) return false;
  const type = family === 4 ? "ipv4" : "ipv6";
  const block = new BlockList();
  block.addSubnet(base!, Number(bits), type);
  return block.check(ip, type);
}

function peerMatches(peer: Peer, other: Pod | { ip: string }, policyNamespace: string): boolean {
  if (peer.ipBlock) {
    if (!("ip" in other)) return false;
    const { cidr, except = [] } = peer.ipBlock;
    return inCidr(other.ip, cidr) && !except.some((c) => inCidr(other.ip, c));
  }
  if (!("labels" in other)) return false;
  const namespaceOk = peer.namespaceSelector
    ? matches(peer.namespaceSelector, namespaceLabels(other.namespace))
    : other.namespace === policyNamespace;
  return namespaceOk && (!peer.podSelector || matches(peer.podSelector, other.labels));
}

function portMatches(
  rules: PortRule[] | undefined,
  port: number,
  protocol: Protocol,
  target: Pod | null,
): boolean {
  if (!rules?.length) return true;
  return rules.some((r) => {
    if ((r.protocol ?? "TCP") !== protocol) return false;
    if (r.port === undefined) return true;
    if (typeof r.port === "string") return target?.ports[r.port] === port;
    return r.endPort === undefined ? r.port === port : r.port <= port && port <= r.endPort;
  });
}

function selecting(policies: K8sObject[], pod: Pod, type: "Ingress" | "Egress"): K8sObject[] {
  return policies.filter(
    (p) =>
      p.metadata.namespace === pod.namespace &&
      (p.spec.policyTypes ?? ["Ingress"]).includes(type) &&
      matches(p.spec.podSelector, pod.labels),
  );
}

/** May `from` open a connection to `to` on `port`, as far as `to`'s ingress policies go? */
export function ingressAllowed(
  policies: K8sObject[],
  from: Pod,
  to: Pod,
  port: number,
  protocol: Protocol = "TCP",
): boolean {
  const applying = selecting(policies, to, "Ingress");
  if (!applying.length) return true;
  return applying.some((p) =>
    (p.spec.ingress ?? []).some(
      (rule: { from?: Peer[]; ports?: PortRule[] }) =>
        (!rule.from?.length || rule.from.some((peer) => peerMatches(peer, from, to.namespace))) &&
        portMatches(rule.ports, port, protocol, to),
    ),
  );
}

/** May `from` open a connection to a pod or an address on `port`, as far as `from`'s egress policies go? */
export function egressAllowed(
  policies: K8sObject[],
  from: Pod,
  to: Destination,
  port: number,
  protocol: Protocol = "TCP",
): boolean {
  const applying = selecting(policies, from, "Egress");
  if (!applying.length) return true;
  const target = "pod" in to ? to.pod : to;
  return applying.some((p) =>
    (p.spec.egress ?? []).some(
      (rule: { to?: Peer[]; ports?: PortRule[] }) =>
        (!rule.to?.length || rule.to.some((peer) => peerMatches(peer, target, from.namespace))) &&
        portMatches(rule.ports, port, protocol, "pod" in to ? to.pod : null),
    ),
  );
}

/** One pod of each Herald workload (Deployments and the Job), by component. */
export function heraldPods(objects: K8sObject[]): Record<string, Pod> {
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

/** A pod in another namespace (or this one), with these labels. */
export const podIn = (namespace: string, labels: Labels = {}, ports: Record<string, number> = {}): Pod => ({
  name: namespace,
  namespace,
  labels,
  ports,
});

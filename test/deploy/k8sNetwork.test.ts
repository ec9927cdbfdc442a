import { describe, expect, it } from "vitest";
import { isBlockedAddress } from "../../services/sender/src/destinations.ts";
import { find, ofKind, overlays, render, targets } from "../support/k8s.ts";
import {
  egressAllowed,
  heraldPods,
  inCidr,
  ingressAllowed,
  podIn as outside,
  type Pod,
} from "../support/networkPolicies.ts";

/**
 * The NetworkPolicies, evaluated as a cluster's network plugin would (test/support/
 * networkPolicies.ts) for the connections that matter: who can reach the gateway, the workers,
 * RabbitMQ and PostgreSQL, and where Herald's pods may connect to. The engines' pods carry the
 * labels their operators give them.
 */
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
const collector = outside("observability", { "app.kubernetes.io/name": "otel-collector" }, { otlp: 4318 });
const publicV4 = "93.184.216.34";
const publicV6 = "2606:2800:220:1:248:1893:25c8:1946";
/** Somewhere on the nodes' or a peered network: a private address that is not a pod. */
const privateHost = "10.0.0.10";
/** An address of each range the senders refuse, and public ones. */
const samples = [
  publicV4,
  "1.1.1.1",
  "0.1.2.3",
  "10.1.2.3",
  "100.64.0.1",
  "127.0.0.1",
  "169.254.169.254",
  "172.20.0.1",
  "192.0.0.8",
  "192.0.2.1",
  "192.168.1.1",
  "198.18.0.1",
  "198.51.100.7",
  "203.0.113.9",
  "224.0.0.251",
  "240.0.0.1",
  publicV6,
  "2001:4860:4860::8888",
  "::",
  "::1",
  "64:ff9b::a00:1",
  "100::1",
  "2001:db8::1",
  "fd00::1",
  "fc00::5",
  "fe80::1",
  "ff02::1",
];

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

  it("let the senders call public addresses on any port, and none the senders refuse themselves", () => {
    for (const ip of [publicV4, publicV6]) {
      for (const port of [443, 80, 8443])
        expect(egressAllowed(policies, sender!, { ip }, port), `${ip}:${port}`).toBe(true);
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
    // The network refuses what services/sender/src/destinations.ts refuses, IPv6 included.
    for (const ip of samples) {
      expect(egressAllowed(policies, sender!, { ip }, 443), ip).toBe(!isBlockedAddress(ip));
    }
  });

  it("let every Herald pod resolve names", () => {
    for (const pod of [gateway!, dispatcher!, sender!, migrate!]) {
      expect(egressAllowed(policies, pod, { ip: privateHost }, 53, "UDP"), pod.name).toBe(true);
      expect(egressAllowed(policies, pod, { ip: privateHost }, 53, "TCP"), pod.name).toBe(true);
    }
  });

  it("let the pods that use PostgreSQL reach it anywhere, and the senders nowhere but on a public address", () => {
    for (const pod of [gateway!, dispatcher!, migrate!]) {
      expect(egressAllowed(policies, pod, { ip: privateHost }, 5432), pod.name).toBe(true);
      expect(egressAllowed(policies, pod, { pod: postgres }, 5432), pod.name).toBe(true);
    }
    expect(egressAllowed(policies, sender!, { ip: privateHost }, 5432)).toBe(false);
    expect(egressAllowed(policies, sender!, { ip: "192.168.10.20" }, 5432)).toBe(false);
    expect(egressAllowed(policies, sender!, { pod: postgres }, 5432)).toBe(false);
    expect(egressAllowed(policies, sender!, { ip: "fd12::5" }, 5432)).toBe(false);
    // A public address is a webhook's, on any port: NetworkPolicies cannot take one port out
    // of a range portably (endPort is ignored by some plugins), and the senders hold no
    // database credentials.
    expect(egressAllowed(policies, sender!, { ip: publicV4 }, 5432)).toBe(true);
  });

  it("let the gateway and the dispatcher reach a broker and a collector anywhere, the senders only in the cluster", () => {
    for (const pod of [gateway!, dispatcher!]) {
      for (const port of [5671, 5672, 4317, 4318]) {
        expect(egressAllowed(policies, pod, { ip: privateHost }, port), `${pod.name}:${port}`).toBe(true);
      }
      expect(egressAllowed(policies, pod, { pod: rabbit }, 5672), pod.name).toBe(true);
    }
    expect(egressAllowed(policies, sender!, { pod: rabbit }, 5672)).toBe(true);
    expect(egressAllowed(policies, sender!, { pod: rabbit }, 5671)).toBe(true);
    expect(egressAllowed(policies, sender!, { pod: collector }, 4318)).toBe(true);
    expect(egressAllowed(policies, sender!, { pod: collector }, 4317)).toBe(true);
    for (const port of [5671, 5672, 4317, 4318, 15672, 8080]) {
      expect(
        egressAllowed(policies, sender!, { ip: privateHost }, port),
        `sender to ${privateHost}:${port}`,
      ).toBe(false);
    }
    // A pod of the cluster that is neither: only the collector's ports are open on it.
    const other = outside("default", { app: "anything" });
    expect(egressAllowed(policies, sender!, { pod: other }, 5672)).toBe(false);
    expect(egressAllowed(policies, sender!, { pod: other }, 80)).toBe(false);
  });

  it("let the migration reach only DNS and PostgreSQL, and nothing but the senders reach outside", () => {
    for (const port of [5671, 5672, 4317, 4318, 443]) {
      expect(egressAllowed(policies, migrate!, { ip: privateHost }, port), String(port)).toBe(false);
      expect(egressAllowed(policies, migrate!, { ip: publicV4 }, port), String(port)).toBe(false);
    }
    expect(egressAllowed(policies, migrate!, { pod: rabbit }, 5672)).toBe(false);
    for (const pod of [gateway!, dispatcher!, migrate!]) {
      expect(egressAllowed(policies, pod, { ip: publicV4 }, 443), pod.name).toBe(false);
      expect(egressAllowed(policies, pod, { ip: publicV6 }, 443), pod.name).toBe(false);
    }
  });
});

describe.each(overlays)("the engines' network policies in the %s overlay", (overlay) => {
  const objects = render(overlay);
  const policies = ofKind(objects, "NetworkPolicy");
  const pods = heraldPods(objects);

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

describe("the address matching", () => {
  it("places IPv4 and IPv6 addresses in their blocks, never in the other family's", () => {
    expect(inCidr("10.1.2.3", "10.0.0.0/8")).toBe(true);
    expect(inCidr("11.0.0.1", "10.0.0.0/8")).toBe(false);
    expect(inCidr("172.31.255.255", "172.16.0.0/12")).toBe(true);
    expect(inCidr("172.32.0.0", "172.16.0.0/12")).toBe(false);
    expect(inCidr("fd00::1", "fc00::/7")).toBe(true);
    expect(inCidr("fe80::1", "fc00::/7")).toBe(false);
    expect(inCidr("fe80::abcd", "fe80::/10")).toBe(true);
    expect(inCidr("::1", "::1/128")).toBe(true);
    expect(inCidr("::2", "::1/128")).toBe(false);
    expect(inCidr(publicV6, "::/0")).toBe(true);
    expect(inCidr("10.0.0.1", "::/0")).toBe(false);
    expect(inCidr("::1", "0.0.0.0/0")).toBe(false);
  });
});

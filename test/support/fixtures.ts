import { expect } from "vitest";
import type { TestGateway } from "./gateway.ts";
import type { Receiver } from "./receiver.ts";

export type DeliveryView = {
  endpoint: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
};
export type AttemptView = {
  id: string;
  status: string;
  attempt_number: number;
  response_status: number | null;
  error: string | null;
  endpoint: string;
};

/** The calls delivery tests make again and again, against one gateway and receiver. */
export function fixtures(gw: TestGateway, receiver: Receiver, app = "acme") {
  return {
    async endpoint(path: string, extra: Record<string, unknown> = {}): Promise<string> {
      const res = await gw.request("POST", "/v3/endpoints", {
        json: { app, url: `${receiver.url}${path}`, ...extra },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.id;
    },
    async send(type: string, data: Record<string, unknown> = { n: 1 }): Promise<string> {
      const res = await gw.request("POST", "/v3/events", { json: { app, type, data } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.id;
    },
    async deliveries(eventId: string): Promise<DeliveryView[]> {
      return (await gw.request("GET", `/v3/events/${eventId}`)).body.deliveries;
    },
    async attempts(query: string): Promise<AttemptView[]> {
      return (await gw.request("GET", `/v3/attempts?limit=100&${query}`)).body.data;
    },
    async delivery(eventId: string, endpointId: string): Promise<DeliveryView | undefined> {
      const all: DeliveryView[] = (await gw.request("GET", `/v3/events/${eventId}`)).body.deliveries;
      return all.find((d) => d.endpoint === endpointId);
    },
    async status(eventId: string, endpointId: string): Promise<string | undefined> {
      const all: DeliveryView[] = (await gw.request("GET", `/v3/events/${eventId}`)).body.deliveries;
      return all.find((d) => d.endpoint === endpointId)?.status;
    },
  };
}

export async function setupApp(gw: TestGateway, types: string[], uid = "acme"): Promise<void> {
  await gw.request("POST", "/v3/apps", { json: { uid, name: uid } });
  for (const name of types) await gw.request("POST", "/v3/event-types", { json: { name } });
}

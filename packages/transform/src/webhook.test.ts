import { describe, expect, it } from "vitest";
import { inputJson, webhookInput } from "./webhook.ts";

describe("webhookInput", () => {
  it("is the attempt's request as handler receives it: the body parsed, its type, names lower-cased", () => {
    // As @herald/contracts' webhookPayload writes it: the event's data as PostgreSQL stored it.
    const body = '{"type":"invoice.paid","timestamp":"2026-03-04T05:06:07.000Z","data":{"amount": 1200}}';
    const input = webhookInput({
      event_id: "evt_1",
      url: "https://example.com/hook",
      headers: { "X-Tenant": "acme" },
      payload: body,
    });
    expect(input).toEqual({
      event_type: "invoice.paid",
      event_id: "evt_1",
      method: "POST",
      url: "https://example.com/hook",
      headers: { "x-tenant": "acme" },
      payload: { type: "invoice.paid", timestamp: "2026-03-04T05:06:07.000Z", data: { amount: 1200 } },
    });
    // And Svix's names beside Herald's, as the sandbox hands it over.
    expect(JSON.parse(inputJson(input))).toMatchObject({ eventType: "invoice.paid", cancel: false });
  });
});

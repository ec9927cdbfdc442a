import { describe, expect, it } from "vitest";
import { nameProblem } from "./crud.ts";

describe("event type name rules", () => {
  it.each(["invoice.paid", "a", "user_2.signed_up", "x".repeat(64), "0.9"])("accepts %s", (name) => {
    expect(nameProblem(name)).toBeNull();
  });

  it.each([
    ["x".repeat(65), "at most 64"],
    ["", "empty"],
    ["Invoice.paid", "uppercase letter 'I'"],
    ["invoice-paid", "'-'"],
    ["invoice paid", "a space"],
    ["invoice/paid", "'/'"],
    ["café.opened", "'é'"],
  ])("refuses %j, naming the rule", (name, message) => {
    expect(nameProblem(name)).toContain(message);
  });
});

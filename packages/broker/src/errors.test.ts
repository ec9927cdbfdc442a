import { describe, expect, it } from "vitest";
import { BrokerUnavailableError, isTransientBrokerError } from "./errors.ts";

describe("the broker's errors worth the same work again", () => {
  it("are its own and the network's, also when another error wraps them", () => {
    expect(isTransientBrokerError(new BrokerUnavailableError())).toBe(true);
    expect(isTransientBrokerError(Object.assign(new Error("reset"), { code: "ECONNRESET" }))).toBe(true);
    const wrapped = new Error("96 attempt(s) not published", { cause: new BrokerUnavailableError() });
    expect(isTransientBrokerError(wrapped)).toBe(true);
  });

  it("are not anything else", () => {
    expect(isTransientBrokerError(new TypeError("x is undefined"))).toBe(false);
    expect(isTransientBrokerError(new Error("not published", { cause: new Error("bad payload") }))).toBe(
      false,
    );
    expect(isTransientBrokerError(null)).toBe(false);
  });
});

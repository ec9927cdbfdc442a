import { DEFAULT_AMQP_URL, DEFAULT_DATABASE_URL } from "@herald/runtime/config";
import { describe, expect, it } from "vitest";

/** scripts/lib/setup.mjs runs before anything is installed, so it repeats the defaults. */
const setupModule: string = "../scripts/lib/setup.mjs";

describe("the defaults of the shared settings", () => {
  it("are the same for the scripts that run before installing as for the services", async () => {
    const setup = (await import(setupModule)) as { DEFAULT_DATABASE_URL: string; DEFAULT_AMQP_URL: string };
    expect(setup.DEFAULT_DATABASE_URL).toBe(DEFAULT_DATABASE_URL);
    expect(setup.DEFAULT_AMQP_URL).toBe(DEFAULT_AMQP_URL);
  });
});

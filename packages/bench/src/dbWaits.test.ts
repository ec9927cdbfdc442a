import { describe, expect, it } from "vitest";
import { statementName } from "./dbWaits.ts";

describe("statementName", () => {
  it("names the hot statements by how their text starts, and others by their first words", () => {
    expect(
      statementName(`
  WITH x AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[],
                         $8::text[])`),
    ).toBe("accept events (gateway)");
    expect(
      statementName(
        "WITH x AS (\n SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])",
      ),
    ).toBe("create deliveries (fan-out)");
    expect(statementName("WITH f AS MATERIALIZED (\n SELECT f.endpoint_id")).toBe("release gate (fan-out)");
    expect(statementName("SELECT count(*) FROM apps WHERE account_id = $1 AND something_long")).toBe(
      "SELECT count(*) FROM apps WHERE account_",
    );
  });
});

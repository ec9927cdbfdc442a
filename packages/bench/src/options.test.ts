import { describe, expect, it } from "vitest";
import { parseOptions } from "./options.ts";

describe("parseOptions --against", () => {
  it("takes a git ref", () => {
    expect(parseOptions(["--quick", "--against", "HEAD~1"])).toMatchObject({
      quick: true,
      against: "HEAD~1",
    });
    expect(parseOptions([])).toMatchObject({ against: null });
  });

  it("does not go with --url, nor without a ref", () => {
    expect(parseOptions(["--against", "main", "--url", "http://x", "--key", "k"])).toHaveProperty("error");
    expect(parseOptions(["--against", " "])).toHaveProperty("error");
    expect(parseOptions(["--against"])).toHaveProperty("error");
  });
});

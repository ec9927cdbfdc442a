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

describe("parseOptions --soak", () => {
  it("takes whole minutes from 1 to 1440, and soaks the lean profile unless told otherwise", () => {
    expect(parseOptions(["--soak", "30"])).toMatchObject({ soak: 30, profiles: ["lean"] });
    expect(parseOptions(["--soak", "1440", "--profile", "deployed"])).toMatchObject({
      soak: 1440,
      profiles: ["deployed"],
    });
    expect(parseOptions(["--soak", "1", "--quick"])).toMatchObject({ soak: 1, quick: true });
    expect(parseOptions([])).toMatchObject({ soak: null, profiles: ["lean", "deployed"] });
  });

  it("refuses anything else, saying what it takes", () => {
    for (const bad of ["0", "1441", "1.5", "-3", "ten", "", "0x10", "1e2"]) {
      const parsed = parseOptions([`--soak=${bad}`]);
      expect(parsed, bad).toHaveProperty("error");
      expect((parsed as { error: string }).error).toMatch(
        /--soak takes a whole number of minutes from 1 to 1440/,
      );
    }
    expect(parseOptions(["--soak"])).toHaveProperty("error");
  });

  it("does not go with --url nor --against", () => {
    expect(parseOptions(["--soak", "5", "--url", "http://x", "--key", "k"])).toMatchObject({
      error: expect.stringMatching(/--soak .* --url/),
    });
    expect(parseOptions(["--soak", "5", "--against", "HEAD~1"])).toMatchObject({
      error: expect.stringMatching(/--soak .* --against/),
    });
  });
});

describe("parseOptions --destination", () => {
  it("takes redis, and is off by default", () => {
    expect(parseOptions(["--quick", "--destination", "redis"])).toMatchObject({ destination: "redis" });
    expect(parseOptions([])).toMatchObject({ destination: null });
  });

  it("refuses another type, a missing one, and --soak beside it", () => {
    expect(parseOptions(["--destination", "kafka"])).toMatchObject({
      error: expect.stringMatching(/--destination takes redis, got "kafka"/),
    });
    expect(parseOptions(["--destination"])).toHaveProperty("error");
    expect(parseOptions(["--destination", "redis", "--soak", "5"])).toMatchObject({
      error: expect.stringMatching(/--destination .* --soak/),
    });
  });
});

import { ConfigReader } from "@herald/runtime";
import { describe, expect, it } from "vitest";
import { roleOf, ssoConfig } from "./config.ts";

const read = (env: Record<string, string>) => {
  const r = new ConfigReader(env);
  const config = ssoConfig(r);
  let problem = "";
  try {
    r.done();
  } catch (err) {
    problem = (err as Error).message;
  }
  return { config, problem };
};

const base = {
  OIDC_ISSUER: "https://login.example.com/",
  OIDC_CLIENT_ID: "herald",
  OIDC_CLIENT_SECRET: "s",
  OIDC_ALLOWED_DOMAINS: "Example.com, @corp.example",
  OIDC_ROLES: "admins=admin,devs=developer",
  OIDC_DEFAULT_ROLE: "viewer",
};

describe("single sign-on's configuration", () => {
  it("is off without an issuer, and says what is missing with one", () => {
    expect(read({}).config).toBeNull();
    expect(read({ OIDC_CLIENT_ID: "x" }).problem).toContain("without OIDC_ISSUER");
    expect(read({ OIDC_ISSUER: "https://login.example.com" }).problem).toContain("OIDC_CLIENT_SECRET");
    expect(read({ ...base, OIDC_ROLES: "admins=root" }).problem).toContain(
      "OIDC_ROLES takes group=role pairs",
    );
    expect(read({ ...base, OIDC_DEFAULT_ROLE: "owner" }).problem).toContain("OIDC_DEFAULT_ROLE");
    expect(read({ ...base, OIDC_SCOPES: "email" }).problem).toContain("openid");
    expect(read({ ...base, OIDC_ISSUER: "http://login.example.com" }).problem).toContain("must be https");
    expect(read({ ...base, OIDC_ISSUER: "http://127.0.0.1:9000" }).problem).toBe("");
    expect(
      read({ ...base, OIDC_DEFAULT_ROLE: undefined as unknown as string }).config?.defaultRole,
    ).toBeNull();
    const { config, problem } = read(base);
    expect(problem).toBe("");
    expect(config).toMatchObject({
      issuer: "https://login.example.com",
      domains: ["example.com", "corp.example"],
      defaultRole: "viewer",
      accountId: null,
    });
  });

  it("admits a verified email of an allowed domain with the highest role of its groups", () => {
    const config = read(base).config!;
    const person = (email: string, groups: unknown, verified: unknown = true) =>
      roleOf(config, { email, email_verified: verified, groups });
    expect(person("Ann@Example.com", ["devs", "admins"])).toEqual({
      role: "admin",
      email: "ann@example.com",
    });
    expect(person("ann@corp.example", ["devs"])).toEqual({ role: "developer", email: "ann@corp.example" });
    expect(person("ann@example.com", "devs")).toEqual({ role: "viewer", email: "ann@example.com" });
    expect(person("ann@example.org", ["admins"])).toHaveProperty("refused");
    expect(person("ann@example.com", ["admins"], "true")).toHaveProperty("refused");
    expect(roleOf(config, { email_verified: true })).toHaveProperty("refused");
    // Without domains, only a mapped group admits.
    const groupsOnly = read({ ...base, OIDC_ALLOWED_DOMAINS: "" }).config!;
    expect(roleOf(groupsOnly, { email: "x@any.org", email_verified: true, groups: ["devs"] })).toEqual({
      role: "developer",
      email: "x@any.org",
    });
    expect(roleOf(groupsOnly, { email: "x@any.org", email_verified: true, groups: [] })).toHaveProperty(
      "refused",
    );
  });
});

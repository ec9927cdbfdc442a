import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { createLogger, createRegistry } from "@herald/runtime";
import { createGateway, type Gateway } from "../../services/api-gateway/src/app.ts";
import { type GatewayConfig, loadConfig } from "../../services/api-gateway/src/config.ts";
import { AMQP_URL } from "./env.ts";
import { createQueuePrefix, createTestDatabase } from "./isolation.ts";

export const ADMIN_TOKEN = "test-admin-token-0123456789";

// biome-ignore lint/suspicious/noExplicitAny: tests read response bodies loosely and assert their shape
export type Response = { status: number; body: any; headers: Headers };

export type RequestOptions = {
  json?: unknown;
  form?: Record<string, unknown>;
  /** Raw body with its content type. */
  raw?: { body: string | Buffer; type: string };
  /** An API key; the account's by default; `null` for none, as a browser on the gateway's origin. */
  key?: string | null;
  headers?: Record<string, string>;
};

/** Form encoding as the API documents it: `a[]=x`, `m[k]=v`, JSON-valued fields as JSON strings. */
export function toForm(
  values: Record<string, unknown>,
  jsonFields: readonly string[] = ["data", "schema"],
): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) continue;
    if (jsonFields.includes(name)) params.append(name, JSON.stringify(value));
    else if (Array.isArray(value)) for (const item of value) params.append(`${name}[]`, String(item));
    else if (value && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) params.append(`${name}[${k}]`, String(v));
    } else params.append(name, String(value));
  }
  return params.toString();
}

export type TestGateway = {
  url: string;
  /** The environment the gateway was configured from, for other services to share. */
  env: Record<string, string>;
  gateway: Gateway;
  prefix: string;
  databaseUrl: string;
  /** The API key of the account made for this gateway. */
  key: string;
  request(method: string, path: string, options?: RequestOptions): Promise<Response>;
  /** Makes another account through the operator route and returns its key. */
  newAccount(name?: string): Promise<string>;
  close(): Promise<void>;
};

/** A gateway in this process on its own database and queue prefix, with one account. */
export async function startGateway(
  env: Record<string, string> = {},
  removeDelays: number[] = [],
  /** The address the gateway reaches its database at (through a test's proxy, say). */
  databaseVia: (url: string) => string = (url) => url,
): Promise<TestGateway> {
  const db = await createTestDatabase();
  const queues = createQueuePrefix();
  const fullEnv: Record<string, string> = {
    PORT: "0",
    HOST: "127.0.0.1",
    DATABASE_URL: databaseVia(db.url),
    DATABASE_POOL_SIZE: "5",
    AMQP_URL,
    AMQP_PREFIX: queues.prefix,
    ADMIN_TOKEN,
    ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    ...env,
  };
  const config: GatewayConfig = loadConfig(fullEnv);
  const gateway = createGateway(
    config,
    createLogger("api-gateway", process.env.TEST_LOG_LEVEL ?? "silent"),
    createRegistry("api-gateway"),
  );
  const server = await gateway.start();
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function request(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    // With `key: null`, a browser on the gateway's own origin: it sends Origin with every
    // request but a GET, as browsers do (a test of another site's page sets its own).
    const browser: Record<string, string> = options.key === null && method !== "GET" ? { origin: url } : {};
    const headers: Record<string, string> = { ...browser, ...options.headers };
    if (options.key !== null && options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
    let body: string | Buffer | undefined;
    if (options.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(options.json);
    } else if (options.form !== undefined) {
      headers["content-type"] = "application/x-www-form-urlencoded";
      body = toForm(options.form);
    } else if (options.raw) {
      headers["content-type"] = options.raw.type;
      body = options.raw.body;
    }
    const res = await fetch(url + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, body: parsed, headers: res.headers };
  }

  async function newAccount(name = "Test account"): Promise<string> {
    const res = await request("POST", "/admin/accounts", {
      json: { name },
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    if (res.status !== 201) throw new Error(`could not create an account: ${JSON.stringify(res.body)}`);
    return res.body.api_key.key as string;
  }

  const key = await newAccount();
  return {
    url,
    env: fullEnv,
    gateway,
    prefix: queues.prefix,
    databaseUrl: db.url,
    key,
    request: (method, path, options = {}) => request(method, path, { key, ...options }),
    newAccount,
    async close() {
      await gateway.stop();
      await queues.remove(removeDelays);
      await db.drop();
    },
  };
}

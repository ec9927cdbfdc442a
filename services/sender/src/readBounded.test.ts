import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import got from "got";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readBounded } from "./readBounded.ts";

const LIMIT = 64;

/** 10 KiB of lines that never repeat, so a wrong offset or a chunk kept twice would show. */
const LONG = Array.from({ length: 640 }, (_, i) => `line ${String(i).padStart(10, "0")}\n`).join("");

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

describe("readBounded", () => {
  const routes = new Map<string, Handler>();
  let server: Server;
  let base = "";
  /** Whether the server saw each route's connection closed before its answer ended. */
  const cut = new Map<string, Promise<boolean>>();

  beforeAll(async () => {
    server = createServer((req, res) => {
      cut.set(req.url!, new Promise((resolve) => res.on("close", () => resolve(!res.writableFinished))));
      routes.get(req.url!)!(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const read = (path: string, handler: Handler) => {
    routes.set(path, handler);
    return readBounded(
      got.stream.post(`${base}${path}`, { body: "x", retry: { limit: 0 }, throwHttpErrors: false }),
      LIMIT,
    );
  };

  it("keeps the first `limit` bytes of a longer body, in one chunk or many", async () => {
    const whole = await read("/long", (_req, res) => res.end(LONG));
    expect(whole).toMatchObject({ statusCode: 200, body: LONG.slice(0, LIMIT) });
    expect(whole.headers["content-length"]).toBe(String(LONG.length));

    const pieces = await read("/pieces", (_req, res) => {
      for (let i = 0; i < LONG.length; i += 10) res.write(LONG.slice(i, i + 10));
      res.end();
    });
    expect(pieces.body).toBe(LONG.slice(0, LIMIT));
  });

  it("stops reading a body that never ends once past the limit, closing the connection", async () => {
    const endless = read("/endless", (_req, res) => {
      res.writeHead(500, { "content-type": "text/plain" });
      const more = setInterval(() => res.write(LONG.slice(0, 1000)), 10);
      res.on("close", () => clearInterval(more));
    });
    const answer = await endless;
    expect(answer).toMatchObject({ statusCode: 500, body: LONG.slice(0, LIMIT) });
    expect(await cut.get("/endless")).toBe(true);
  });

  it("keeps a body of exactly `limit` bytes whole", async () => {
    const exact = LONG.slice(0, LIMIT);
    const answer = await read("/exact", (_req, res) => res.end(exact));
    expect(answer.body).toBe(exact);
    expect(answer.body).toHaveLength(LIMIT);
  });

  it("reads an empty body as the empty string, with the status and headers", async () => {
    const answer = await read("/empty", (_req, res) => {
      res.writeHead(204, { etag: '"e1"' });
      res.end();
    });
    expect(answer).toMatchObject({ statusCode: 204, body: "" });
    expect(answer.headers.etag).toBe('"e1"');
  });

  it("a connection lost mid-body answers with the status and what came of the body", async () => {
    const answer = await read("/cut", (_req, res) => {
      res.writeHead(502, { "content-length": "1000" });
      res.write("partial", () => res.socket!.destroy());
    });
    expect(answer).toMatchObject({ statusCode: 502, body: "partial" });
  });

  it("a connection lost before the status rejects with the stream's error", async () => {
    const answer = read("/reset", (req) => req.socket.destroy());
    await expect(answer).rejects.toMatchObject({ code: "ECONNRESET" });
  });
});

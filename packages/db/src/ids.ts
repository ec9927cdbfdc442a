import { randomBytes } from "node:crypto";

/**
 * Prefixed, time-sortable ids: `<prefix>_` then a ULID (48-bit milliseconds, 80 random bits,
 * Crockford base32). Within one process ids are strictly increasing, even in the same
 * millisecond, so `ORDER BY id` is creation order and cursors stay stable while rows arrive.
 */
export const idPrefixes = {
  account: "acct",
  apiKey: "key",
  app: "app",
  eventType: "etype",
  endpoint: "ep",
  event: "evt",
  delivery: "dlv",
  attempt: "atmpt",
  replay: "rpl",
  message: "msg",
  session: "ses",
  auditRecord: "aud",
} as const;

export type IdKind = keyof typeof idPrefixes;

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
let lastTime = -1;
const lastRandom = Buffer.alloc(10);

function encodeTime(ms: number): string {
  let out = "";
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function encodeRandom(bytes: Buffer): string {
  // 80 bits -> 16 base32 characters
  let bits = 0n;
  for (const b of bytes) bits = (bits << 8n) | BigInt(b);
  let out = "";
  for (let i = 0; i < 16; i++) {
    out = ALPHABET[Number(bits & 31n)] + out;
    bits >>= 5n;
  }
  return out;
}

function incrementRandom(): void {
  for (let i = lastRandom.length - 1; i >= 0; i--) {
    const v = lastRandom[i]!;
    if (v < 255) {
      lastRandom[i] = v + 1;
      return;
    }
    lastRandom[i] = 0;
  }
}

export function ulid(now = Date.now()): string {
  if (now <= lastTime) {
    incrementRandom();
  } else {
    lastTime = now;
    randomBytes(10).copy(lastRandom);
  }
  return encodeTime(lastTime) + encodeRandom(lastRandom);
}

export function newId(kind: IdKind): string {
  return `${idPrefixes[kind]}_${ulid()}`;
}

/** The smallest id of this kind made at or after `ms`: the lower bound of a time window. */
export function idFloor(kind: IdKind, ms: number): string {
  return `${idPrefixes[kind]}_${encodeTime(ms)}${"0".repeat(16)}`;
}

/** The millisecond an id (or a bound made by `idFloor`) was made at: its ULID's time part. */
export function idTime(id: string): number {
  const body = id.slice(id.indexOf("_") + 1, id.indexOf("_") + 11);
  let ms = 0;
  for (const c of body) {
    const v = ALPHABET.indexOf(c);
    if (v < 0) throw new Error(`not a time-sortable id: ${id}`);
    ms = ms * 32 + v;
  }
  return ms;
}

const ID_BODY = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** True when `value` is an id of this kind (`ep_01J…`). */
export function isId(kind: IdKind, value: string): boolean {
  const prefix = `${idPrefixes[kind]}_`;
  return value.startsWith(prefix) && ID_BODY.test(value.slice(prefix.length));
}

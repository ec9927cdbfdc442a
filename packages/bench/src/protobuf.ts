/**
 * The protobuf wire format, read only: enough to decode the OTLP trace exports the services send
 * (`OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf`, as deployed) without a schema compiler.
 */
export type Field =
  | { no: number; wire: 0; value: bigint }
  | { no: number; wire: 1; value: bigint }
  | { no: number; wire: 2; value: Uint8Array }
  | { no: number; wire: 5; value: number };

export function* fields(buf: Uint8Array): Generator<Field> {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let at = 0;
  const varint = (): bigint => {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (at >= buf.length) throw new Error("protobuf: truncated varint");
      const byte = buf[at++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return result;
      if (shift > 63n) throw new Error("protobuf: varint too long");
    }
  };
  const take = (n: number): number => {
    if (n < 0 || at + n > buf.length) throw new Error("protobuf: truncated field");
    const start = at;
    at += n;
    return start;
  };
  while (at < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) yield { no, wire, value: varint() };
    else if (wire === 1) yield { no, wire, value: view.getBigUint64(take(8), true) };
    else if (wire === 2) {
      const length = Number(varint());
      const start = take(length);
      yield { no, wire, value: buf.subarray(start, start + length) };
    } else if (wire === 5) yield { no, wire, value: view.getUint32(take(4), true) };
    else throw new Error(`protobuf: wire type ${wire} not supported`);
  }
}

const utf8 = new TextDecoder();

export const text = (f: Field): string => (f.wire === 2 ? utf8.decode(f.value) : "");
export const hex = (f: Field): string => (f.wire === 2 ? Buffer.from(f.value).toString("hex") : "");
export const integer = (f: Field): bigint =>
  f.wire === 0 || f.wire === 1 ? f.value : f.wire === 5 ? BigInt(f.value) : 0n;

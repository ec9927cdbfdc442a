import type { Socket } from "node:net";
import { tcpServer } from "./testSupport.ts";

/** A fake AMQP 0-9-1 broker and the frames it writes, for tests of what a broker may do wrong. */

const u16 = (n: number) => Buffer.from([n >> 8, n & 0xff]);
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const shortstr = (s: string) => Buffer.concat([Buffer.from([Buffer.byteLength(s)]), Buffer.from(s)]);
const longstr = (s: string) => Buffer.concat([u32(Buffer.byteLength(s)), Buffer.from(s)]);

export { longstr, shortstr, u16, u32 };

/** An AMQP 0-9-1 method frame: type 1, channel, size, class and method ids, arguments, 0xCE. */
export function method(
  channel: number,
  classId: number,
  methodId: number,
  args: Buffer = Buffer.alloc(0),
): Buffer {
  const payload = Buffer.concat([u16(classId), u16(methodId), args]);
  return Buffer.concat([Buffer.from([1]), u16(channel), u32(payload.length), payload, Buffer.from([0xce])]);
}

/** The frames a fake broker writes. */
export const frames = {
  start: method(0, 10, 10, Buffer.concat([Buffer.from([0, 9]), u32(0), longstr("PLAIN"), longstr("en_US")])),
  // No heartbeat: the client starts no timer.
  tune: method(0, 10, 30, Buffer.concat([u16(0), u32(131072), u16(0)])),
  openOk: method(0, 10, 41, shortstr("")),
  close: (code: number, text: string) =>
    method(0, 10, 50, Buffer.concat([u16(code), shortstr(text), u16(0), u16(0)])),
  closeOk: method(0, 10, 51),
  channelOpenOk: (channel: number) => method(channel, 20, 11, u32(0)),
  channelClose: (channel: number, code: number, text: string) =>
    method(channel, 20, 40, Buffer.concat([u16(code), shortstr(text), u16(0), u16(0)])),
  channelCloseOk: (channel: number) => method(channel, 20, 41),
  confirmSelectOk: (channel: number) => method(channel, 85, 11),
  /** basic.return (312 NO_ROUTE) and the content header of a returned message of `size` bytes. */
  returned: (channel: number, size: number) => {
    const properties = Buffer.concat([u16(60), u16(0), Buffer.alloc(8), u16(0)]);
    properties.writeBigUInt64BE(BigInt(size), 4);
    return Buffer.concat([
      method(channel, 60, 50, Buffer.concat([u16(312), shortstr("NO_ROUTE"), shortstr(""), shortstr("q")])),
      Buffer.from([2]),
      u16(channel),
      u32(properties.length),
      properties,
      Buffer.from([0xce]),
    ]);
  },
  /** A content body frame of `size` zero bytes. */
  body: (channel: number, size: number) =>
    Buffer.concat([Buffer.from([3]), u16(channel), u32(size), Buffer.alloc(size), Buffer.from([0xce])]),
};

/**
 * A fake broker that speaks just enough AMQP 0-9-1: it reads the protocol header, sends
 * connection.start, answers start-ok with tune, and answers connection.open and channel.open
 * with what the test gives (by default open-ok); confirm.select and the closing handshakes
 * are answered as RabbitMQ would.
 */
export function fakeBroker(answers: {
  open: Buffer;
  channelOpen?: (channel: number) => Buffer;
  /** Called on each basic.publish, with the channel it came on. */
  onPublish?: (socket: Socket, channel: number) => void;
}) {
  return tcpServer((socket) => {
    let pending = Buffer.alloc(0);
    let greeted = false;
    socket.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      if (!greeted) {
        if (pending.length < 8) return;
        pending = pending.subarray(8);
        greeted = true;
        socket.write(frames.start);
      }
      while (pending.length >= 7 && pending.length >= 8 + pending.readUInt32BE(3)) {
        const size = pending.readUInt32BE(3);
        const channel = pending.readUInt16BE(1);
        const id = pending[0] === 1 ? `${pending.readUInt16BE(7)}.${pending.readUInt16BE(9)}` : "";
        pending = pending.subarray(8 + size);
        if (id === "10.11") socket.write(frames.tune);
        else if (id === "10.40") socket.write(answers.open);
        else if (id === "20.10")
          socket.write(answers.channelOpen?.(channel) ?? frames.channelOpenOk(channel));
        else if (id === "85.10") socket.write(frames.confirmSelectOk(channel));
        else if (id === "20.40") socket.write(frames.channelCloseOk(channel));
        else if (id === "10.50") socket.write(frames.closeOk);
        else if (id === "10.51") socket.end();
        else if (id === "60.40") answers.onPublish?.(socket, channel);
      }
    });
  });
}

import { createConnection, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy to a real server, so a test can cut the network to it (connections dropped and
 * refused) and restore it, without stopping the server other test files share.
 */
export type TcpProxy = {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
};

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  // Null while cut: cutting twice, or restoring what is not cut, does nothing.
  let server: Server | null = null;
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const made = createServer((client) => {
        const upstream = createConnection({ host: targetHost, port: targetPort });
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on("close", () => sockets.delete(s));
          s.on("error", () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
      made.once("error", reject);
      made.listen(port, "127.0.0.1", () => {
        server = made;
        const address = made.address();
        resolve(typeof address === "object" && address ? address.port : port);
      });
    });
  const port = await listen(0);
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      const closing = server;
      server = null;
      if (!closing) return resolve();
      closing.close(() => resolve());
    });
  return {
    port,
    cut: stop,
    async restore() {
      if (!server) await listen(port);
    },
    close: stop,
  };
}

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
  let server: Server;
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server = createServer((client) => {
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
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        const address = server.address();
        resolve(typeof address === "object" && address ? address.port : port);
      });
    });
  const port = await listen(0);
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return {
    port,
    cut: stop,
    async restore() {
      await listen(port);
    },
    close: stop,
  };
}

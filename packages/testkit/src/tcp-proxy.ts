import { createConnection, createServer, type Server, type Socket } from "node:net";

/**
 * A loopback TCP proxy in front of a real server, so a test can cut the network to MariaDB or Redis
 * (and restore it) without stopping the shared test stack. `withhold` picks client data that is never
 * delivered, as by a network that lost it: with HTTP/1.1, one request's first chunk begins with its
 * method, so a client can be held at one precise request.
 */
export async function startTcpProxy(
  targetPort: number,
  options: { withhold?: (data: Buffer) => boolean } = {},
) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let withheld = 0;

  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = createConnection({ port: targetPort, host: "127.0.0.1" });
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on("close", () => sockets.delete(socket));
          socket.on("error", () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.on("data", (data) => {
          if (options.withhold?.(data)) withheld += 1;
          else upstream.write(data);
        });
        client.on("end", () => upstream.end());
        upstream.pipe(client);
      });
      const listening = server;
      listening.listen(port, "127.0.0.1", () => {
        port = (listening.address() as { port: number }).port;
        resolve();
      });
    });

  await listen();
  return {
    get port() {
      return port;
    },
    /** How many chunks `withhold` kept from the server. */
    get withheld() {
      return withheld;
    },
    /** Drops every connection and refuses new ones. */
    async cut() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server?.close(() => resolve()));
    },
    restore: listen,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => (server?.listening ? server.close(() => resolve()) : resolve()));
    },
  };
}

export type TcpProxy = Awaited<ReturnType<typeof startTcpProxy>>;

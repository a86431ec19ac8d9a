import type { AddressInfo } from "node:net";
import { signJwt } from "@flashgate/auth";
import { serve } from "@hono/node-server";

type Fetchable = { fetch: (request: Request, ...rest: never[]) => Response | Promise<Response> };

/** Serves an app over real HTTP on an ephemeral loopback port. */
export async function serveApp(app: Fetchable): Promise<{ url: string; close: () => Promise<void> }> {
  return new Promise((resolve) => {
    const server = serve(
      {
        fetch: app.fetch as (request: Request) => Response | Promise<Response>,
        port: 0,
        hostname: "127.0.0.1",
      },
      (info: AddressInfo) => {
        resolve({
          url: `http://127.0.0.1:${info.port}`,
          close: () => new Promise<void>((done) => server.close(() => done())),
        });
      },
    );
  });
}

export const userToken = (secret: string, userId: number | string, ttlS = 600) =>
  signJwt(secret, { sub: String(userId), exp: Math.floor(Date.now() / 1000) + ttlS });

export const adminToken = (secret: string, operator: string, ttlS = 600) =>
  signJwt(secret, { sub: operator, role: "admin", exp: Math.floor(Date.now() / 1000) + ttlS });

let keyCounter = 0;
export const idempotencyKey = (prefix = "k") => {
  keyCounter += 1;
  return `${prefix}-${Date.now().toString(36)}-${process.pid}-${keyCounter}`;
};

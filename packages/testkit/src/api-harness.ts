import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { signJwt } from "@flashgate/auth";
import { getRequestListener } from "@hono/node-server";

type Fetchable = { fetch: (request: Request, ...rest: never[]) => Response | Promise<Response> };

/** Serves an app (a fetch handler or a node:http listener) over real HTTP on an ephemeral loopback port. */
export async function serveApp(
  app: Fetchable | RequestListener,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server =
    typeof app === "function"
      ? createServer(app)
      : createServer(getRequestListener(app.fetch as (request: Request) => Response | Promise<Response>));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
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

/** An RFC 9457 problem as the API answers it. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  traceId: string;
}

/** The body of a problem response, typed for assertions. */
export const problemOf = async (response: Response): Promise<Problem> => (await response.json()) as Problem;

/** An HTTP Basic `Authorization` header's value. */
export const basicAuthorization = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

import { Counter, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { serviceRoutes } from "./service-routes.ts";

describe("serviceRoutes", () => {
  it("is ready only when every probe answers within a second, and names the ones that did not", async () => {
    const routes = serviceRoutes(
      {
        redis: async () => "PONG",
        database: () => new Promise(() => {}),
        consuming: () => false,
        broken: async () => {
          throw new Error("refused");
        },
      },
      new Registry(),
    );
    const response = await routes.request("/readyz");
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({
      status: "not ready",
      redis: true,
      database: false,
      consuming: false,
      broken: false,
    });
    const ready = await serviceRoutes({ redis: async () => "PONG" }, new Registry()).request("/readyz");
    expect([ready.status, await ready.json()]).toEqual([200, { status: "ready", redis: true }]);
  });

  it("shares each probe's answer among the calls while it runs and for a second after: a flood is one probe", async () => {
    let probed = 0;
    const routes = serviceRoutes(
      {
        database: async () => {
          probed += 1;
          return "ok";
        },
      },
      new Registry(),
    );
    const statuses = await Promise.all(
      Array.from({ length: 50 }, async () => (await routes.request("/readyz")).status),
    );
    expect([new Set(statuses), probed]).toEqual([new Set([200]), 1]);
    await routes.request("/readyz");
    expect(probed).toBe(1);
  });

  it("serves liveness and the registry's metrics", async () => {
    const registry = new Registry();
    new Counter({ name: "served_total", help: "a counter of this registry", registers: [registry] }).inc(3);
    const routes = serviceRoutes({}, registry);
    expect((await routes.request("/healthz")).status).toBe(200);
    const metrics = await routes.request("/metrics");
    expect(metrics.headers.get("content-type")).toBe(registry.contentType);
    expect(await metrics.text()).toMatch(/^served_total 3$/m);
  });
});

import { Hono } from "hono";
import { Gauge, type Registry } from "prom-client";

/** A dependency a service needs to do its work: true when it answers (a rejection or `false` is no). */
export type ReadinessProbe = () => Promise<unknown> | boolean;

const probeTimeoutMs = 1000;

async function answers(probe: ReadinessProbe): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), probeTimeoutMs);
  });
  try {
    return await Promise.race([Promise.resolve(probe()).then((value) => value !== false), late]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Every service's operational routes, alike: /healthz (the process runs), /readyz (each probe answered
 * within a second; 503 naming the ones that did not) and /metrics (Prometheus text).
 */
export function serviceRoutes(probes: Record<string, ReadinessProbe>, registry: Registry) {
  // Readiness as a metric too, probed at each scrape: alerts see what a balancer sees on /readyz.
  new Gauge({
    name: "flashgate_dependency_up",
    help: "1 when the dependency answered its readiness probe within a second at this scrape, else 0",
    labelNames: ["dependency"],
    registers: [registry],
    async collect() {
      const names = Object.keys(probes);
      const results = await Promise.all(names.map((name) => answers(probes[name])));
      for (const [i, name] of names.entries()) this.set({ dependency: name }, results[i] ? 1 : 0);
    },
  });
  return new Hono()
    .get("/healthz", (c) => c.json({ status: "ok" }))
    .get("/readyz", async (c) => {
      const names = Object.keys(probes);
      const results = await Promise.all(names.map((name) => answers(probes[name])));
      const checks = Object.fromEntries(names.map((name, i) => [name, results[i]]));
      const ready = results.every(Boolean);
      return c.json({ status: ready ? "ready" : "not ready", ...checks }, ready ? 200 : 503);
    })
    .get("/metrics", async (c) =>
      c.text(await registry.metrics(), 200, { "content-type": registry.contentType }),
    );
}

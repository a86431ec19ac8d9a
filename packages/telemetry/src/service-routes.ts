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

/** How long a probe's answer is given again: a flood of /readyz costs each dependency one probe at a time. */
const probeFreshMs = 1000;

/**
 * A probe whose answer is shared: by every caller while it runs, and for `probeFreshMs` after. Anyone
 * may call /readyz, and a probe per call would turn a flood of it into a flood of queries — and into
 * "not ready" once the probe's own bounded pool overflows, taking a healthy instance out of its balancer.
 */
function sharedProbe(probe: ReadinessProbe): () => Promise<boolean> {
  let last: { answer: Promise<boolean>; at: number } | undefined;
  return () => {
    const now = performance.now();
    if (!last || now - last.at >= probeFreshMs) last = { answer: answers(probe), at: now };
    return last.answer;
  };
}

/**
 * Every service's operational routes, alike: /healthz (the process runs), /readyz (each probe answered
 * within a second, as of the last second; 503 naming the ones that did not) and /metrics (Prometheus text).
 */
export function serviceRoutes(givenProbes: Record<string, ReadinessProbe>, registry: Registry) {
  const { probes, metrics } = operationalRoutes(givenProbes, registry);
  return new Hono().route("/", probes).route("/", metrics);
}

/**
 * The same routes apart, for a service that serves its metrics on a port of their own (the purchase
 * API: its public port is the internet's, its metrics are the operators'): `probes` (/healthz, /readyz)
 * and `metrics` (/metrics), sharing the probes and the readiness metric.
 */
export function operationalRoutes(givenProbes: Record<string, ReadinessProbe>, registry: Registry) {
  const probes = Object.fromEntries(
    Object.entries(givenProbes).map(([name, probe]) => [name, sharedProbe(probe)]),
  );
  // Readiness as a metric too, probed at each scrape: alerts see what a balancer sees on /readyz.
  new Gauge({
    name: "flashgate_dependency_up",
    help: "1 when the dependency answered its readiness probe within a second at this scrape, else 0",
    labelNames: ["dependency"],
    registers: [registry],
    async collect() {
      const names = Object.keys(probes);
      const results = await Promise.all(names.map((name) => probes[name]()));
      for (const [i, name] of names.entries()) this.set({ dependency: name }, results[i] ? 1 : 0);
    },
  });
  const probeRoutes = new Hono()
    .get("/healthz", (c) => c.json({ status: "ok" }))
    .get("/readyz", async (c) => {
      const names = Object.keys(probes);
      const results = await Promise.all(names.map((name) => probes[name]()));
      const checks = Object.fromEntries(names.map((name, i) => [name, results[i]]));
      const ready = results.every(Boolean);
      return c.json({ status: ready ? "ready" : "not ready", ...checks }, ready ? 200 : 503);
    });
  const metrics = new Hono().get("/metrics", async (c) =>
    c.text(await registry.metrics(), 200, { "content-type": registry.contentType }),
  );
  return { probes: probeRoutes, metrics };
}

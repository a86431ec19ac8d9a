import { Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createFastHistogram } from "./fast-histogram.ts";

describe("fast histogram", () => {
  it("exports exactly what prom-client's histogram exports for the same observations", async () => {
    const config = { help: "latency", labelNames: ["route", "status"], buckets: [0.001, 0.01, 0.1] };
    const theirs = new Registry();
    const ours = new Registry();
    const reference = new Histogram({ name: "t_seconds", registers: [theirs], ...config });
    const fast = createFastHistogram({ name: "t_seconds", registers: [ours], ...config });
    const hot = fast.child({ route: "/v1/purchases", status: 409 });
    for (const value of [0.0005, 0.001, 0.002, 0.05, 0.5, 3]) {
      reference.observe({ route: "/v1/purchases", status: 409 }, value);
      hot.observe(value);
    }
    reference.observe({ route: "/healthz", status: 200 }, 0.02);
    fast.observe({ route: "/healthz", status: 200 }, 0.02);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    ours.resetMetrics();
    expect(await ours.metrics()).not.toContain("t_seconds_count");
  });

  it("refuses a label it does not know", () => {
    const fast = createFastHistogram({
      name: "u_seconds",
      help: "u",
      labelNames: ["route"],
      buckets: [1],
      registers: [],
    });
    expect(() => fast.child({ path: "/" })).toThrow(/unknown label path/);
  });
});

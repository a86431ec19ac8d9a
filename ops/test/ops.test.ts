import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { dashboardFile, expressions, rulesFile, seriesNames } from "./promql.ts";

const promtool = (...args: string[]) =>
  execFileSync("promtool", args, {
    cwd: fileURLToPath(new URL("../prometheus/", import.meta.url)),
    encoding: "utf8",
  });

// promtool runs as processes of their own: seconds on a loaded machine.
describe("operations: Prometheus rules and the Grafana dashboard", { timeout: 60_000 }, () => {
  it("the rules are valid and each alert fires on its unit test's series, not on the healthy ones", () => {
    expect(promtool("check", "rules", fileURLToPath(rulesFile))).toMatch(/SUCCESS: 20 rules found/);
    expect(promtool("check", "config", "prometheus.yml")).toMatch(/is valid prometheus config file syntax/);
    expect(promtool("test", "rules", "rules.test.yml")).toMatch(/SUCCESS/);
  });

  it("the dashboard reads only recorded series the rules define and flashgate's own metrics", () => {
    const { dashboard, recorded } = expressions();
    expect(dashboard.length).toBeGreaterThanOrEqual(12);
    const names = dashboard.flatMap(seriesNames);
    for (const name of names.filter((n) => n.includes(":")))
      expect(recorded, `${dashboardFile}: ${name}`).toContain(name);
    expect(names.filter((n) => n.startsWith("flashgate_")).length).toBeGreaterThan(0);
  });

  it("finds the series in an expression, not its labels, ranges or strings", () => {
    expect(
      seriesNames(
        'sum by (le) (rate(flashgate_a_bucket{route="/v1/x", job=~"flashgate_b"}[1m])) / flashgate:c:rate1m or up{job="m"} == 0',
      ),
    ).toEqual(["flashgate_a_bucket", "flashgate:c:rate1m", "up"]);
  });
});

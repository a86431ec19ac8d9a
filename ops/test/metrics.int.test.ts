import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type AppProcess,
  eventually,
  freePort,
  stackEnv,
  startAppProcess,
  startMaintainer,
} from "@flashgate/testkit";
import { type ApiHarness, startApi } from "@flashgate/testkit/purchase-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportedNames, expressions, rulesFile, seriesNames } from "./promql.ts";

describe("operations against the running apps", () => {
  let api: ApiHarness;
  let maintainer: AppProcess;
  let dashboard: AppProcess;
  beforeAll(async () => {
    api = await startApi();
    maintainer = await startMaintainer();
    dashboard = await startAppProcess("dashboard", {
      ...stackEnv(),
      MAINTAINER_URL: maintainer.url,
      PURCHASE_API_METRICS_URL: api.metricsUrl as string,
    });
  });
  afterAll(async () => {
    await dashboard?.kill();
    await maintainer?.kill();
    await api?.close();
  });

  const targets = () => ({
    "purchase-api": api.metricsUrl as string,
    "cache-maintainer": maintainer.url,
    dashboard: dashboard.url,
  });

  it("every metric a rule or the Grafana dashboard reads is exported by an app", async () => {
    const exported = new Set<string>();
    for (const url of Object.values(targets()))
      for (const name of exportedNames(await (await fetch(`${url}/metrics`)).text())) exported.add(name);
    const { rules, dashboard: panels } = expressions();
    const read = new Set(
      [...rules, ...panels].flatMap(seriesNames).filter((name) => name.startsWith("flashgate_")),
    );
    expect(read.size).toBeGreaterThan(10);
    expect([...read].filter((name) => !exported.has(name))).toEqual([]);
  });

  it("a real Prometheus with the rules sees every app up, its dependencies and the connector running", async () => {
    const home = mkdtempSync(join(tmpdir(), "flashgate-prometheus-"));
    const port = await freePort();
    const jobs = Object.entries(targets()).map(
      ([job, url]) => `  - job_name: ${job}\n    static_configs: [{ targets: ["${new URL(url).host}"] }]`,
    );
    writeFileSync(
      join(home, "prometheus.yml"),
      `global: { scrape_interval: 1s, evaluation_interval: 1s }\nrule_files: ["${fileURLToPath(rulesFile)}"]\nscrape_configs:\n${jobs.join("\n")}\n`,
    );
    const prometheus: ChildProcess = spawn(
      "prometheus",
      [
        `--config.file=${join(home, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(home, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: "ignore" },
    );
    const query = async (path: string) => {
      const response = await fetch(`http://127.0.0.1:${port}${path}`);
      return ((await response.json()) as { data: unknown }).data;
    };
    try {
      await eventually(
        async () => {
          const { activeTargets } = (await query("/api/v1/targets")) as {
            activeTargets: { labels: { job: string }; health: string }[];
          };
          expect(activeTargets.map((t) => [t.labels.job, t.health]).sort()).toEqual([
            ["cache-maintainer", "up"],
            ["dashboard", "up"],
            ["purchase-api", "up"],
          ]);
        },
        { timeoutMs: 30_000 },
      );
      await eventually(
        async () => {
          const { groups } = (await query("/api/v1/rules")) as {
            groups: { rules: { name: string; health: string }[] }[];
          };
          const rules = groups.flatMap((group) => group.rules);
          expect(rules).toHaveLength(20);
          expect(rules.filter((rule) => rule.health !== "ok")).toEqual([]);
          const values = async (expr: string) =>
            (
              (await query(`/api/v1/query?query=${encodeURIComponent(expr)}`)) as {
                result: { value: [number, string] }[];
              }
            ).result.map((sample) => sample.value[1]);
          expect(await values("min(flashgate_dependency_up)")).toEqual(["1"]);
          expect(await values('min(flashgate_connector_running{connector="flashgate-sale"})')).toEqual(["1"]);
          expect(await values('ALERTS{alertstate="firing", severity="page"}')).toEqual([]);
        },
        { timeoutMs: 30_000 },
      );
    } finally {
      await new Promise((resolve) => {
        prometheus.once("exit", resolve);
        prometheus.kill();
      });
      rmSync(home, { recursive: true, force: true });
    }
  });
});

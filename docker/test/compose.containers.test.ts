import { spawnSync } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { databaseEngineOf, parseEnvFile, repoRoot, writeComposeEnv } from "@flashgate/stack";
import { adminToken, basicAuthorization, eventually, userToken } from "@flashgate/testkit";
import { localImages, podmanEnv } from "@flashgate/testkit/podman";
import mysql from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

/** Ports of their own, so that the compose stack runs beside a native one. */
const ports = {
  FLASHGATE_DB_PORT: "15307",
  FLASHGATE_REDIS_PORT: "15380",
  FLASHGATE_KAFKA_PORT: "15092",
  FLASHGATE_CONNECT_PORT: "15083",
  FLASHGATE_API_PORT: "15080",
  FLASHGATE_MAINTAINER_PORT: "15082",
  FLASHGATE_DASHBOARD_PORT: "15084",
};
const api = `http://127.0.0.1:${ports.FLASHGATE_API_PORT}`;

/** MySQL 8 unless FLASHGATE_DB=mariadb picks the compose file's MariaDB profile. */
describe("docker compose up, under podman with the local images", () => {
  const dir = mkdtempSync(join(tmpdir(), "flashgate-compose-"));
  const envFile = join(dir, ".env");
  const compose = (...args: string[]) =>
    spawnSync(
      "docker-compose",
      [
        "--env-file",
        envFile,
        "-p",
        "flashgate-compose-test",
        "-f",
        join(repoRoot, "docker-compose.yml"),
        ...args,
      ],
      {
        encoding: "utf8",
        env: { ...process.env, DOCKER_HOST: inject("dockerHost") },
      },
    );
  let secrets: Record<string, string>;

  beforeAll(async () => {
    writeComposeEnv(envFile, databaseEngineOf(process.env));
    secrets = parseEnvFile(readFileSync(envFile, "utf8"));
    const extra = { ...localImages(), ...ports };
    appendFileSync(
      envFile,
      Object.entries(extra)
        .map(([name, value]) => `${name}=${value}\n`)
        .join(""),
    );
    const started = Date.now();
    const up = compose("up", "-d", "--no-build");
    if (up.status !== 0) {
      const logs = compose("logs", "--no-color", "--tail", "40");
      throw new Error(`docker-compose up failed:\n${up.stdout}\n${up.stderr}\n${logs.stdout}`);
    }
    try {
      await eventually(async () => expect((await fetch(`${api}/readyz`)).status).toBe(200), {
        timeoutMs: 300_000,
        intervalMs: 1000,
      });
    } catch (error) {
      // What each container said: the reason a stack never became ready is in one of them.
      const logs = compose("logs", "--no-color", "--tail", "15");
      throw new Error(`${(error as Error).message}\n${compose("ps").stdout}\n${logs.stdout}${logs.stderr}`);
    }
    console.log(`compose stack ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });

  afterAll(() => {
    const down = compose("down", "-v", "--remove-orphans");
    if (down.status !== 0) console.error(down.stdout, down.stderr);
  });

  it("sells exactly the units to 200 buyers, keeps the ledger, and a raw-SQL restock reaches the fast path", async () => {
    const admin = {
      authorization: `Bearer ${adminToken(secrets.ADMIN_JWT_SECRET, "compose-test")}`,
      "content-type": "application/json",
    };
    const activityId = 1000 + Math.floor(Math.random() * 1_000_000);
    const put = async (path: string, body: unknown) => {
      const response = await fetch(`${api}/admin/v1${path}`, {
        method: "PUT",
        headers: admin,
        body: JSON.stringify(body),
      });
      expect(response.status, await response.clone().text()).toBe(201);
    };
    await put(`/activities/${activityId}`, {
      name: "compose test",
      startsAt: new Date(Date.now() - 60_000).toISOString(),
      endsAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    await put(`/activities/${activityId}/skus/1`, { initialStock: 50, priceCents: 1999, currency: "EUR" });
    // A new SKU is unknown to the cache (404) until CDC has carried its rows: its public view says when.
    await eventually(
      async () => expect((await fetch(`${api}/v1/activities/${activityId}/skus/1`)).status).toBe(200),
      { timeoutMs: 120_000, intervalMs: 200 },
    );
    const buy = async (userId: number) => {
      for (;;) {
        const response = await fetch(`${api}/v1/purchases`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${userToken(secrets.AUTH_JWT_SECRET, userId)}`,
            "idempotency-key": `compose-${activityId}-${userId}`,
            "content-type": "application/json",
          },
          body: JSON.stringify({ activityId, skuId: 1 }),
        });
        const body = (await response.json()) as { code?: string };
        // 503 is a dependency's passing trouble (the cache rebuilding, the database busy): come back.
        if (response.status !== 503) return { status: response.status, code: body.code };
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => buy(activityId * 1000 + i)));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(50);
    expect(answers.every((a) => a.status === 201 || a.code === "SOLD_OUT")).toBe(true);

    const db = await mysql.createConnection({
      uri: `mysql://flashgate:${secrets.APP_DB_PASSWORD}@127.0.0.1:${ports.FLASHGATE_DB_PORT}/flashgate`,
    });
    try {
      const [[row]] = (await db.query(
        `SELECT s.available, (SELECT COUNT(*) FROM sale_order o WHERE o.activity_id = s.activity_id AND o.sku_id = s.sku_id AND o.state IN ('PENDING','PAID')) AS sold
         FROM sale_stock s WHERE s.activity_id = ? AND s.sku_id = 1`,
        [activityId],
      )) as unknown as [[{ available: number; sold: number }]];
      expect({ available: row.available, sold: Number(row.sold) }).toEqual({ available: 0, sold: 50 });
      // A DBA's restock in raw SQL: Debezium carries it to Redis, and the next buyers get units.
      await db.query("UPDATE sale_stock SET available = available + 5 WHERE activity_id = ? AND sku_id = 1", [
        activityId,
      ]);
    } finally {
      await db.end();
    }
    await eventually(async () => expect((await buy(activityId * 1000 + 500)).status).toBe(201), {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
  });

  it("asks every caller of Kafka Connect's REST API for its password: the purchase API's container has none", async () => {
    const connect = `http://127.0.0.1:${ports.FLASHGATE_CONNECT_PORT}/connectors`;
    expect((await fetch(connect)).status).toBe(401);
    const basic = basicAuthorization("flashgate", secrets.CONNECT_REST_PASSWORD);
    const authorized = await fetch(connect, { headers: { authorization: basic } });
    // setup registered the connector with the password it was given.
    expect([authorized.status, await authorized.json()]).toEqual([200, ["flashgate-sale"]]);
    const fromApi = compose(
      "exec",
      "-T",
      "purchase-api",
      "node",
      "-e",
      "fetch('http://connect:8083/connectors').then((r) => console.log(r.status), (e) => console.log(e.message))",
    );
    expect(fromApi.stdout.trim()).toBe("401");
  });

  it("serves the purchase API's metrics inside the compose network, not on its published port", async () => {
    expect((await fetch(`${api}/metrics`)).status).toBe(404);
    const fromDashboard = compose(
      "exec",
      "-T",
      "dashboard",
      "node",
      "-e",
      "fetch('http://purchase-api:8081/metrics').then(async (r) => console.log(r.status, (await r.text()).includes('flashgate_purchase_transactions_total')), (e) => console.log(e.message))",
    );
    expect(fromDashboard.stdout.trim()).toBe("200 true");
  });

  it("asks for the operators' password on the dashboard, which reads Redis as its read-only user", async () => {
    const dashboard = `http://127.0.0.1:${ports.FLASHGATE_DASHBOARD_PORT}/api/snapshot`;
    expect((await fetch(dashboard)).status).toBe(401);
    const operator = basicAuthorization("operator", secrets.DASHBOARD_PASSWORD);
    const snapshot = await fetch(dashboard, { headers: { authorization: operator } });
    expect(snapshot.status).toBe(200);
    // Its Redis user may read the drift check's keys and nothing else.
    const asDashboard = (command: string) =>
      compose(
        "exec",
        "-T",
        "redis",
        "sh",
        "-c",
        `redis-cli --user flashgate-dashboard --pass "$DASHBOARD_REDIS_PASSWORD" --no-auth-warning ${command}`,
      ).stdout;
    expect(asDashboard("lrange fg:drift:incidents 0 0")).not.toMatch(/NOPERM|WRONGPASS/);
    expect(asDashboard("set fg:drift:last x")).toMatch(/NOPERM/);
    expect(asDashboard("hgetall fg:{1:1}:sku")).toMatch(/NOPERM/);
  });

  it("keeps the root password out of every container's environment and files", () => {
    const rootPassword = readFileSync(secrets.DB_ROOT_PASSWORD_FILE, "utf8");
    expect(rootPassword.length).toBeGreaterThanOrEqual(32);
    const podman = (...args: string[]) =>
      spawnSync("podman", args, { encoding: "utf8", env: { ...process.env, ...podmanEnv } });
    // Every container of the stack, the one-shot setup that has exited included.
    const ids = podman(
      "ps",
      "-a",
      "-q",
      "--filter",
      "label=com.docker.compose.project=flashgate-compose-test",
    )
      .stdout.split("\n")
      .filter(Boolean);
    const containers = JSON.parse(podman("inspect", ...ids).stdout) as {
      Name: string;
      Config: { Env: string[] };
    }[];
    expect(containers.map((container) => container.Name).join(" ")).toMatch(/setup/);
    for (const container of containers)
      expect(container.Config.Env.join("\n"), container.Name).not.toContain(rootPassword);
    // The local database image's init file (mktemp, under /tmp) is gone once the server answered.
    const database = databaseEngineOf(process.env);
    const left = compose("exec", "-T", database, "sh", "-c", "cat /tmp/tmp.* 2>/dev/null; true");
    expect(left.status).toBe(0);
    expect(left.stdout).not.toContain(rootPassword);
  });

  it("runs Redis as its own user on a read-only root, its password in memory and never on its volume", () => {
    const inRedis = (command: string) => compose("exec", "-T", "redis", "sh", "-c", command);
    // The server's own process (pid 1 after the shell's exec), not only the shell that started it.
    const uid = inRedis("awk '/^Uid:/ { print $2 }' /proc/1/status").stdout.trim();
    expect(uid).toBe(inRedis("id -u redis").stdout.trim());
    expect(uid).not.toBe("0");
    expect(inRedis("cat /proc/1/comm").stdout.trim()).toBe("redis-server");
    expect(inRedis("touch /probe 2>&1").status).not.toBe(0);
    expect(inRedis("grep -c ' /tmp tmpfs ' /proc/mounts").stdout.trim()).toBe("1");
    const onVolume = inRedis(`grep -rl -- "${secrets.REDIS_PASSWORD}" /data || true`);
    expect(onVolume.status).toBe(0);
    expect(onVolume.stdout.trim()).toBe("");
  });
});

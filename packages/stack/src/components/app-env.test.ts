import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { silentProgress } from "../progress.ts";
import { stackContext } from "../stack.ts";
import { appEnv, appEnvOf } from "./app.ts";

describe("each app is started with the secrets it uses and no others", () => {
  const ctx = stackContext({
    env: {},
    home: mkdtempSync(join(tmpdir(), "fg-env-")),
    progress: silentProgress,
  });
  const secrets = [ctx.secrets.authJwtSecret, ctx.secrets.adminJwtSecret, ctx.secrets.paymentWebhookSecret];
  const holds = (env: Record<string, string>) =>
    secrets.filter((secret) => Object.values(env).some((value) => value.includes(secret)));

  it("the dashboard and the maintainer hold no token or webhook secret", () => {
    expect(holds(appEnvOf("dashboard", ctx, 1))).toEqual([]);
    expect(holds(appEnvOf("cache-maintainer", ctx, 1))).toEqual([]);
  });

  it("the dashboard holds no database account: it reads the maintainers' verdicts from Redis", () => {
    const env = appEnvOf("dashboard", ctx, 1);
    expect(env.DATABASE_URL).toBeUndefined();
    expect(Object.values(env).some((value) => value.includes(ctx.secrets.appDbPassword))).toBe(false);
    // Its Redis user is its own read-only one, never the apps'.
    expect(new URL(env.REDIS_URL).username).toBe("flashgate-dashboard");
    expect(Object.values(env).some((value) => value.includes(ctx.secrets.redisPassword))).toBe(false);
  });

  it("the purchase API and the maintainer each hold their own database account, and neither the other's", () => {
    const api = appEnvOf("purchase-api", ctx, 1);
    const maintainer = appEnvOf("cache-maintainer", ctx, 1);
    expect(new URL(api.DATABASE_URL).username).toBe("flashgate");
    expect(new URL(maintainer.DATABASE_URL).username).toBe("flashgate_maintainer");
    expect(Object.values(api).some((value) => value.includes(ctx.secrets.maintainerDbPassword))).toBe(false);
    expect(Object.values(maintainer).some((value) => value.includes(ctx.secrets.appDbPassword))).toBe(false);
  });

  it("the purchase-api holds the three it verifies with, and its port; Kafka's brokers (its queue) but not Connect", () => {
    const env = appEnvOf("purchase-api", ctx, 18080);
    expect(holds(env)).toEqual(secrets);
    expect(env.PORT).toBe("18080");
    expect(env.KAFKA_BROKERS).toBe(appEnv(ctx).KAFKA_BROKERS);
    expect(env.KAFKA_CONNECT_URL).toBeUndefined();
  });
});

import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.ts";

const env = {
  DATABASE_URL: "mysql://u:p@127.0.0.1:3306/flashgate",
  REDIS_URL: "redis://127.0.0.1:6379",
  AUTH_JWT_SECRET: "a".repeat(32),
  ADMIN_JWT_SECRET: "b".repeat(32),
  PAYMENT_WEBHOOK_SECRET: "c".repeat(32),
};

describe("purchase-api config", () => {
  it("starts with distinct secrets of 32 bytes or more", () => {
    expect(loadConfig(env).AUTH_JWT_SECRET).toBe(env.AUTH_JWT_SECRET);
  });

  it("refuses to start with one secret for users and admins, naming the variable", () => {
    expect(() => loadConfig({ ...env, ADMIN_JWT_SECRET: env.AUTH_JWT_SECRET })).toThrow(
      /ADMIN_JWT_SECRET: must differ from AUTH_JWT_SECRET/,
    );
  });

  it("refuses a secret shorter than 32 bytes", () => {
    expect(() => loadConfig({ ...env, PAYMENT_WEBHOOK_SECRET: "x".repeat(31) })).toThrow(
      /PAYMENT_WEBHOOK_SECRET: must be at least 32 bytes/,
    );
  });
});

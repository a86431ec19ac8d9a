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

  it("queues buyers only with Kafka to queue them on, and takes its SASL user whole", () => {
    expect(loadConfig(env).PURCHASE_ADMISSION).toBe("sync");
    expect(() => loadConfig({ ...env, PURCHASE_ADMISSION: "queued" })).toThrow(
      /PURCHASE_ADMISSION: queues buyers on Kafka: needs KAFKA_BROKERS/,
    );
    const kafka = { KAFKA_BROKERS: "k1:9092,k2:9092", PURCHASE_ADMISSION: "auto" };
    expect(loadConfig({ ...env, ...kafka }).PURCHASE_ADMISSION).toBe("auto");
    expect(() => loadConfig({ ...env, ...kafka, KAFKA_SASL_MECHANISM: "scram-sha-512" })).toThrow(
      /KAFKA_SASL_MECHANISM: needs KAFKA_USERNAME and KAFKA_PASSWORD/,
    );
    const sasl = { KAFKA_SASL_MECHANISM: "scram-sha-512", KAFKA_USERNAME: "api", KAFKA_PASSWORD: "pw" };
    expect(loadConfig({ ...env, ...kafka, ...sasl }).KAFKA_SASL).toEqual({
      mechanism: "scram-sha-512",
      username: "api",
      password: "pw",
    });
  });
});

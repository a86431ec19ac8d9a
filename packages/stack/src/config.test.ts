import { ConfigError, parseConfig } from "@flashgate/config";
import { describe, expect, it } from "vitest";
import { stackConfigSchema } from "./config.ts";

describe("the stack's config", () => {
  it("applies defaults and coerces numbers", () => {
    const config = parseConfig(stackConfigSchema, { FLASHGATE_REDIS_PORT: "7000" });
    expect(config.FLASHGATE_REDIS_PORT).toBe(7000);
    expect(config.FLASHGATE_DB_PORT).toBe(3307);
    expect(config.FLASHGATE_DB).toBe("mysql");
  });

  it("names the variable of a bad value", () => {
    expect(() => parseConfig(stackConfigSchema, { FLASHGATE_KAFKA_PORT: "ninety" })).toThrow(ConfigError);
    expect(() => parseConfig(stackConfigSchema, { FLASHGATE_KAFKA_PORT: "70000" })).toThrow(
      /FLASHGATE_KAFKA_PORT/,
    );
    expect(() => parseConfig(stackConfigSchema, { FLASHGATE_DB: "postgres" })).toThrow(/FLASHGATE_DB/);
    expect(() => parseConfig(stackConfigSchema, { FLASHGATE_CONNECT_HEAP: "lots" })).toThrow(
      /FLASHGATE_CONNECT_HEAP: must look like 512m/,
    );
  });
});

import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.ts";

const base = {
  REDIS_URL: "redis://127.0.0.1:6379",
  DATABASE_URL: "mysql://u:p@127.0.0.1/f",
  KAFKA_BROKERS: "k:9093",
};

describe("the maintainer's Kafka credentials", () => {
  it("are none by default (the local stack's listener asks for none)", () => {
    expect(loadConfig(base).KAFKA_SASL).toBeUndefined();
  });

  it("are its KafkaUser's where the listener authenticates", () => {
    const config = loadConfig({
      ...base,
      KAFKA_SASL_MECHANISM: "scram-sha-512",
      KAFKA_USERNAME: "cache-maintainer",
      KAFKA_PASSWORD: "from-the-secret",
      KAFKA_CA_FILE: "/etc/kafka-ca/ca.crt",
    });
    expect(config.KAFKA_SASL).toEqual({
      mechanism: "scram-sha-512",
      username: "cache-maintainer",
      password: "from-the-secret",
    });
    expect(config.KAFKA_CA_FILE).toBe("/etc/kafka-ca/ca.crt");
  });

  it("refuses a mechanism without a user and password, naming the variable", () => {
    expect(() => loadConfig({ ...base, KAFKA_SASL_MECHANISM: "scram-sha-512" })).toThrow(
      /KAFKA_SASL_MECHANISM: needs KAFKA_USERNAME and KAFKA_PASSWORD/,
    );
  });

  it("acts on the connector through REST unless told Strimzi owns it", () => {
    expect(loadConfig(base).CONNECTOR_CONTROL).toBe("rest");
    expect(loadConfig({ ...base, CONNECTOR_CONTROL: "strimzi" }).CONNECTOR_CONTROL).toBe("strimzi");
    expect(() => loadConfig({ ...base, CONNECTOR_CONTROL: "kubectl" })).toThrow(/CONNECTOR_CONTROL/);
  });
});

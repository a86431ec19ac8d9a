import { createLogger } from "@flashgate/logger";
import { stackEnv } from "@flashgate/testkit";
import { describe, expect, it } from "vitest";
import { kafkaClient } from "../src/client.ts";

describe("the Kafka client", () => {
  it("sets no timer while its connections are idle", async () => {
    const kafka = kafkaClient(
      stackEnv().KAFKA_BROKERS.split(","),
      "idle-client-test",
      createLogger("idle-client-test", "silent"),
    );
    const admin = kafka.admin();
    await admin.connect();
    try {
      // A response on the connection: from then on kafkajs 2.2.4's request queue re-checked its empty
      // queue every millisecond, for as long as the connection lived.
      await admin.listTopics();
      const { setTimeout: original } = globalThis;
      let timers = 0;
      globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
        timers += 1;
        return original(...args);
      }) as typeof setTimeout;
      try {
        await new Promise((resolve) => original(resolve, 500));
      } finally {
        globalThis.setTimeout = original;
      }
      expect(timers).toBeLessThan(10);
    } finally {
      await admin.disconnect();
    }
  });
});

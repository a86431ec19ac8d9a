import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentProgress, stackContext } from "@flashgate/stack";
import { stackEnv } from "@flashgate/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { prepareBroker } from "../src/components/kafka.ts";

describe("a new broker's storage", () => {
  const home = mkdtempSync(join(tmpdir(), "flashgate-kafka-storage-"));
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  // A cluster id is 22 base64url characters: one in 64 begins with "-", which Kafka's storage tool
  // must not read as an option (a fresh stack failed to start with such an id).
  it("is formatted with its cluster id, even one that begins with a dash", () => {
    const ctx = stackContext({ env: { ...stackEnv(), FLASHGATE_HOME: home }, progress: silentProgress });
    const id = "-eOZDW1iQ9iU-cU20RStDQ";
    mkdirSync(ctx.paths.kafkaData, { recursive: true });
    writeFileSync(join(ctx.paths.kafkaData, "cluster-id"), id);
    prepareBroker(ctx, 0);
    const meta = readFileSync(join(ctx.paths.kafkaData, "logs", "meta.properties"), "utf8");
    expect(meta).toContain(`cluster.id=${id}`);
  });
});

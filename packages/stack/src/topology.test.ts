import { parseConfig } from "@flashgate/config";
import { describe, expect, it } from "vitest";
import { stackConfigSchema } from "./config.ts";
import { instanceName, instancePort, instances } from "./topology.ts";

const config = (topology: string) => parseConfig(stackConfigSchema, { FLASHGATE_TOPOLOGY: topology });

describe("a topology's processes", () => {
  it("single: one of each, named without a number", () => {
    const single = config("single");
    expect(instances(single, "redis")).toEqual([0]);
    expect(instanceName(single, "kafka", 0)).toBe("kafka");
  });

  it("cluster: 6 Redis nodes, 3 brokers, 2 Connect workers, 2 APIs, 2 maintainers, numbered from 1", () => {
    const cluster = config("cluster");
    const counts = (["redis", "kafka", "connect", "purchase-api", "cache-maintainer"] as const).map(
      (kind) => instances(cluster, kind).length,
    );
    expect(counts).toEqual([6, 3, 2, 2, 2]);
    expect(instanceName(cluster, "redis", 5)).toBe("redis-6");
  });

  it("instance i listens 100 ports above the first", () => {
    expect([0, 1, 2].map((index) => instancePort(9092, index))).toEqual([9092, 9192, 9292]);
  });

  it("refuses an unknown topology", () => {
    expect(() => config("mesh")).toThrow("FLASHGATE_TOPOLOGY");
  });
});

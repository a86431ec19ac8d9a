import { Cluster, Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { parseRedisUrl, redisClient } from "./client.ts";

describe("REDIS_URL", () => {
  it("names one server, its password decoded", () => {
    expect(parseRedisUrl("redis://:p%40ss@127.0.0.1:6380")).toEqual({
      nodes: [{ host: "127.0.0.1", port: 6380 }],
      username: undefined,
      password: "p@ss",
    });
  });

  it("lists a cluster's seed nodes, after the first as host:port or as URLs", () => {
    expect(parseRedisUrl("redis://app:secret@10.0.0.1:7000,10.0.0.2:7001, redis://10.0.0.3")).toEqual({
      nodes: [
        { host: "10.0.0.1", port: 7000 },
        { host: "10.0.0.2", port: 7001 },
        { host: "10.0.0.3", port: 6379 },
      ],
      username: "app",
      password: "secret",
    });
  });

  it("names one server's logical database by its path; a cluster has none but 0", () => {
    const single = redisClient("redis://127.0.0.1:1/3", { lazyConnect: true });
    expect((single as Redis).options.db).toBe(3);
    single.disconnect();
    expect(() => redisClient("redis://127.0.0.1:1/x", { lazyConnect: true })).toThrow("database number");
    expect(() => redisClient("redis://127.0.0.1:1/2,127.0.0.1:2", { lazyConnect: true })).toThrow("Cluster");
  });

  it("refuses another scheme", () => {
    expect(() => parseRedisUrl("http://127.0.0.1:6379")).toThrow("redis://");
  });

  it("makes a Cluster client for several seeds and a plain one for one server", () => {
    const single = redisClient("redis://127.0.0.1:1", { lazyConnect: true });
    const cluster = redisClient("redis://:pw@127.0.0.1:1,127.0.0.1:2", {
      lazyConnect: true,
      connectTimeout: 900,
    });
    expect(single).toBeInstanceOf(Redis);
    expect(cluster).toBeInstanceOf(Cluster);
    // Every node is reached with the seeds' password and the caller's per-connection options.
    expect((cluster as Cluster).options.redisOptions).toMatchObject({ password: "pw", connectTimeout: 900 });
    single.disconnect();
    cluster.disconnect();
  });
});

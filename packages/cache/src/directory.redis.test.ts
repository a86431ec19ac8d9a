import { binlogPosition } from "@flashgate/cdc";
import { fastRedisUrl, freshIds } from "@flashgate/testkit";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DirectoryEntry,
  lookupDirectory,
  markDirectoryComplete,
  markDirectoryIncomplete,
  readDirectory,
  writeDirectory,
} from "./directory.ts";
import { type FlashgateRedis, withScripts } from "./scripts.ts";

const at = (pos: number) => binlogPosition("binlog.000002", pos, 0);
const hour = 3_600_000;

// A logical database of its own: this file marks the directory complete and incomplete, which would
// change what the other files' services answer for SKUs missing from Redis.
const directoryDb = 1;

describe("the sale directory, on Redis alone", () => {
  let redis: FlashgateRedis;
  beforeAll(async () => {
    redis = withScripts(new Redis(fastRedisUrl(), { db: directoryDb }));
    await markDirectoryComplete(redis);
  });
  afterAll(() => redis.disconnect());

  const window = (activityId: number, position: string, endsMs: number | undefined): DirectoryEntry => ({
    kind: "activity",
    activityId,
    position,
    endsMs,
  });
  const sku = (
    ids: { activityId: number; skuId: number },
    position: string,
    exists: boolean,
  ): DirectoryEntry => ({
    kind: "sku",
    ...ids,
    position,
    exists,
  });

  it("answers unknown activities and SKUs NOT_FOUND, a live sale's SKU LIVE, an ended one ENDED", async () => {
    const live = freshIds();
    const ended = freshIds();
    await writeDirectory(redis, [
      window(live.activityId, at(10), Date.now() + hour),
      sku(live, at(10), true),
      window(ended.activityId, at(10), Date.now() - 1),
      sku(ended, at(10), true),
    ]);
    expect(await lookupDirectory(redis, live.activityId, live.skuId)).toBe("LIVE");
    expect(await lookupDirectory(redis, live.activityId, live.skuId + 1)).toBe("NOT_FOUND");
    expect(await lookupDirectory(redis, live.activityId + 1_000_000, live.skuId)).toBe("NOT_FOUND");
    expect(await lookupDirectory(redis, ended.activityId, ended.skuId)).toBe("ENDED");
  });

  it("needs both rows, as the sale's join does: a stock row of an activity not (or no longer) there is unknown", async () => {
    const ids = freshIds();
    await writeDirectory(redis, [sku(ids, at(10), true)]);
    expect(await lookupDirectory(redis, ids.activityId, ids.skuId)).toBe("NOT_FOUND");
    await writeDirectory(redis, [window(ids.activityId, at(20), Date.now() + hour)]);
    expect(await lookupDirectory(redis, ids.activityId, ids.skuId)).toBe("LIVE");
    await writeDirectory(redis, [window(ids.activityId, at(30), undefined)]);
    expect(await lookupDirectory(redis, ids.activityId, ids.skuId)).toBe("NOT_FOUND");
  });

  it("keeps what a later position wrote: a read older than a deletion does not bring the SKU back", async () => {
    const ids = freshIds();
    await writeDirectory(redis, [window(ids.activityId, at(10), Date.now() + hour), sku(ids, at(10), true)]);
    expect(await writeDirectory(redis, [sku(ids, at(30), false)])).toBe(1);
    // A full load read at 20, written after CDC applied the deletion at 30.
    expect(await writeDirectory(redis, [sku(ids, at(20), true), sku(ids, at(30), true)])).toBe(0);
    expect(await lookupDirectory(redis, ids.activityId, ids.skuId)).toBe("NOT_FOUND");
    // The same SKU created again later.
    expect(await writeDirectory(redis, [sku(ids, at(40), true)])).toBe(1);
    expect(await lookupDirectory(redis, ids.activityId, ids.skuId)).toBe("LIVE");
    // After the binlog source changed, positions compare nothing: a forced load writes what it read.
    expect(await writeDirectory(redis, [sku(ids, at(5), false)], { force: true })).toBe(1);
    expect(await lookupDirectory(redis, ids.activityId, ids.skuId)).toBe("NOT_FOUND");
  });

  it("indexes every activity it holds, with each entry's value, for the full load's comparison", async () => {
    const ids = freshIds();
    await writeDirectory(redis, [window(ids.activityId, at(10), 1234), sku(ids, at(10), true)]);
    const held = (await readDirectory(redis)).get(ids.activityId);
    expect(Object.fromEntries(held ?? [])).toEqual({ w: "1234", [`s:${ids.skuId}`]: "+" });
  });

  it("answers INCOMPLETE, whatever it holds, until a full load marks it complete", async () => {
    const ids = freshIds();
    await writeDirectory(redis, [window(ids.activityId, at(10), Date.now() + hour), sku(ids, at(10), true)]);
    await markDirectoryIncomplete(redis);
    try {
      expect(await lookupDirectory(redis, ids.activityId, ids.skuId)).toBe("INCOMPLETE");
      expect(await lookupDirectory(redis, ids.activityId + 1_000_000, 1)).toBe("INCOMPLETE");
    } finally {
      await markDirectoryComplete(redis);
    }
    expect(await lookupDirectory(redis, ids.activityId, ids.skuId)).toBe("LIVE");
  });
});

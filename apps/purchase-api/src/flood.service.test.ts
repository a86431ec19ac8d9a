import { markDirectoryIncomplete } from "@flashgate/cache";
import {
  countedAccount,
  createSale,
  fastDatabaseUrl,
  fastRedisUrl,
  fastTierContext,
  freshIds,
  inWaves,
} from "@flashgate/testkit";
import { type ApiHarness, startApi } from "@flashgate/testkit/purchase-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const tally = (statuses: number[]) =>
  statuses.reduce<Record<number, number>>((counts, status) => {
    counts[status] = (counts[status] ?? 0) + 1;
    return counts;
  }, {});

// A logical database of its own: the directory this file loads whole would change what other files'
// services answer for SKUs they create in MySQL alone (no CDC here to add them).
const directoryDb = 2;

describe("a flood of ids the cache holds no state for, answered from the sale directory", () => {
  let api: ApiHarness;
  let account: Awaited<ReturnType<typeof countedAccount>>;
  const live = freshIds();
  beforeAll(async () => {
    account = await countedAccount(fastTierContext(), fastDatabaseUrl(), "fg_flood_probe");
    api = await startApi({ databaseUrl: account.databaseUrl, redisUrl: `${fastRedisUrl()}/${directoryDb}` });
    await createSale(api.pool, { ...live, units: 5 });
    await api.load(live.activityId, live.skuId);
    await api.loadDirectory();
  });
  afterAll(async () => api.close());

  const view = async (activityId: number, skuId: number) =>
    (await fetch(`${api.url}/v1/activities/${activityId}/skus/${skuId}`)).status;
  const unknownActivity = (index: number) => live.activityId + 1_000_000 + index;

  it("unknown activities, unknown SKUs of a live sale, purchases of unknown SKUs: 404, no MySQL statement", async () => {
    expect(await view(live.activityId, live.skuId)).toBe(200);
    const before = await account.statements();
    const answers = [
      ...(await inWaves(300, 50, (i) => view(unknownActivity(i), 1 + i))),
      ...(await inWaves(300, 50, (i) => view(live.activityId, live.skuId + 1 + i))),
      ...(await inWaves(
        300,
        50,
        async (i) => (await api.purchase(42, { ...live, skuId: live.skuId + 1 + i })).status,
      )),
    ];
    expect(tally(answers)).toEqual({ 404: 900 });
    expect(await account.statements()).toBe(before);
  });

  it("buyers repeating with new keys (bots): 409 ALREADY_PURCHASED or 429, no MySQL statement; their own key still gets their order", async () => {
    const sale = freshIds();
    await createSale(api.pool, { ...sale, units: 10 });
    await api.load(sale.activityId, sale.skuId);
    const buyers = [101, 102, 103, 104, 105];
    const bought = await Promise.all(buyers.map((userId) => api.purchase(userId, sale)));
    expect(bought.map((answer) => answer.status)).toEqual(Array(buyers.length).fill(201));
    // No CDC on this tier: the cache learns the buyers (and their orders' keys) by a load, as a rebuild would.
    await api.load(sale.activityId, sale.skuId);
    const before = await account.statements();
    const repeats = await inWaves(buyers.length * 6, 10, async (i) => {
      const answer = await api.purchase(buyers[i % buyers.length], sale);
      return answer.status === 409 ? String(answer.body.code) : String(answer.status);
    });
    expect(repeats.filter((answer) => answer !== "ALREADY_PURCHASED" && answer !== "429")).toEqual([]);
    expect(repeats).toContain("ALREADY_PURCHASED");
    expect(await account.statements()).toBe(before);
    const replay = await api.purchase(buyers[0], sale, bought[0].key);
    expect(replay.body.orderId).toBe(bought[0].body.orderId);
    expect(await account.statements()).toBeGreaterThan(before);
  });

  it("asks MySQL while the directory is not loaded whole, and answers the same", async () => {
    await markDirectoryIncomplete(api.redis);
    try {
      const before = await account.statements();
      expect(tally(await inWaves(20, 10, (i) => view(unknownActivity(i), 1)))).toEqual({ 404: 20 });
      expect(await account.statements()).toBeGreaterThan(before);
    } finally {
      await api.loadDirectory();
    }
    const before = await account.statements();
    expect(tally(await inWaves(20, 10, (i) => view(unknownActivity(i), 1)))).toEqual({ 404: 20 });
    expect(await account.statements()).toBe(before);
  });
});

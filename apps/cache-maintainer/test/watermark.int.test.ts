import { skuKeys } from "@flashgate/cache";
import { reconcile } from "@flashgate/sync";
import {
  type AppProcess,
  awaitPartitionsShared,
  clients,
  createSale,
  eventually,
  expectConverged,
  freshIds,
  startMaintainer,
} from "@flashgate/testkit";
import { afterAll, describe, expect, it } from "vitest";

describe("drift detection with several maintainers sharing the partitions", () => {
  const c = clients();
  const running: AppProcess[] = [];
  // A planted difference must stay for the test to find it.
  const maintainer = () => startMaintainer({ DRIFT_AUTO_REPAIR: "false" });
  afterAll(async () => {
    for (const maintainer of running) await maintainer.kill();
    await c.close();
  });

  /** A quiet SKU reads in-sync once the cache has caught up, whichever instance applied it. */
  async function quietSkuInSync() {
    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 4 });
    await expectConverged(c, sale.activityId, sale.skuId);
    await eventually(
      async () => {
        const check = await reconcile(c.pool, c.redis, {
          activityId: sale.activityId,
          recordIncidents: false,
        });
        expect(check.skus.map((sku) => sku.verdict)).toEqual(["in-sync"]);
      },
      { timeoutMs: 20_000 },
    );
    return sale;
  }

  it("with two and then three instances a quiet SKU reads in-sync, a real difference reads drift", async () => {
    running.push(await maintainer(), await maintainer());
    await awaitPartitionsShared(running);
    const sale = await quietSkuInSync();

    // A difference nobody wrote through MySQL: found, not excused as "behind".
    await c.redis.hset(skuKeys(sale.activityId, sale.skuId).sku, "available", 3);
    await eventually(
      async () => {
        const check = await reconcile(c.pool, c.redis, {
          activityId: sale.activityId,
          recordIncidents: false,
        });
        expect(check.skus.map((sku) => sku.verdict)).toEqual(["drift"]);
      },
      { timeoutMs: 20_000 },
    );

    running.push(await maintainer());
    await awaitPartitionsShared(running);
    await quietSkuInSync();

    // One instance dies without leaving the group: its partitions move once its session expires.
    const [dead] = running.splice(0, 1);
    await dead.kill("SIGKILL");
    await awaitPartitionsShared(running);
    await quietSkuInSync();
  });
});

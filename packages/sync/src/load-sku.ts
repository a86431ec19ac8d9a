import {
  type DirectoryEntry,
  type FlashgateRedis,
  type LoadResult,
  writeDirectory,
  writeSkuLoad,
} from "@flashgate/cache";
import { binlogPosition } from "@flashgate/cdc";
import { readSku } from "@flashgate/db";
import type { Pool } from "mysql2/promise";

/**
 * Rebuilds one SKU's maintained state from MySQL, fenced by the binlog position of the read: the
 * same function serves first loads, FLUSHALL recovery and drift repair. What it read of the SKU's
 * existence goes into the sale directory too, fenced the same way.
 */
export async function loadSkuFromDatabase(
  pool: Pool,
  redis: FlashgateRedis,
  activityId: number,
  skuId: number,
  options: { force?: boolean } = {},
): Promise<LoadResult | "unknown_sku"> {
  const read = await readSku(pool, activityId, skuId);
  const position = binlogPosition(read.binlogFile, read.binlogPos, 0);
  const sku = { kind: "sku", activityId, skuId, position } as const;
  if ("absent" in read) {
    await writeDirectory(
      redis,
      [
        read.absent === "stock"
          ? { ...sku, exists: false }
          : { kind: "activity", activityId, position, endsMs: undefined },
      ],
      options,
    );
    return "unknown_sku";
  }
  const loaded = await writeSkuLoad(redis, activityId, skuId, { ...read, position }, options);
  const known: DirectoryEntry[] = [
    { ...sku, exists: true },
    { kind: "activity", activityId, position, endsMs: read.endsAt.getTime() },
  ];
  await writeDirectory(redis, known, options);
  return loaded;
}

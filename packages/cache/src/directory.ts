import { directoryKeys } from "./keys.ts";
import type { FlashgateRedis } from "./scripts.ts";

/**
 * One fact of the sale directory, at the binlog position it was committed (a CDC change) or read (a load
 * from MySQL): an activity's window end, or whether a SKU's stock row exists. `undefined` / false: deleted.
 */
export type DirectoryEntry =
  | { kind: "activity"; activityId: number; position: string; endsMs: number | undefined }
  | { kind: "sku"; activityId: number; skuId: number; position: string; exists: boolean };

/** What the directory says of a SKU the cache holds no state for. */
export type DirectoryAnswer = "NOT_FOUND" | "ENDED" | "LIVE" | "INCOMPLETE";

/** Entries written per script call: any number of entries, bounded arguments per call. */
const entriesPerCall = 1000;

const windowField = "w";
const skuField = (skuId: number | string) => `s:${skuId}`;

function field(entry: DirectoryEntry) {
  return entry.kind === "activity"
    ? { field: windowField, value: entry.endsMs === undefined ? "-" : String(entry.endsMs) }
    : { field: skuField(entry.skuId), value: entry.exists ? "+" : "-" };
}

/**
 * Writes entries, each fenced by its position (a later one already written stays); `force` writes them
 * whatever the stored positions, which belong to another binlog after the source changed.
 */
export async function writeDirectory(
  redis: FlashgateRedis,
  entries: DirectoryEntry[],
  options: { force?: boolean } = {},
): Promise<number> {
  let written = 0;
  for (let i = 0; i < entries.length; i += entriesPerCall) {
    const chunk = entries.slice(i, i + entriesPerCall);
    const args = chunk.map((entry) => ({
      activity: String(entry.activityId),
      position: entry.position,
      ...field(entry),
    }));
    written += Number(
      await redis.fgDirectory(
        chunk.length + 1,
        directoryKeys.index,
        ...chunk.map((entry) => directoryKeys.activity(entry.activityId)),
        options.force ? 1 : 0,
        JSON.stringify(args),
      ),
    );
  }
  return written;
}

const storedValue = (stored: string | null | undefined) => stored?.slice(stored.indexOf(" ") + 1);

/**
 * Whether a SKU exists and its sale is still on, by the directory alone (one round trip): the answer
 * for an id the cache holds no state for. INCOMPLETE while the directory has not been loaded whole.
 */
export async function lookupDirectory(
  redis: FlashgateRedis,
  activityId: number,
  skuId: number,
  nowMs = Date.now(),
): Promise<DirectoryAnswer> {
  const [complete, window, sku] = (await redis.fgDirectoryLookup(
    directoryKeys.state,
    directoryKeys.activity(activityId),
    skuField(skuId),
  )) as (string | null)[];
  if (!complete) return "INCOMPLETE";
  const endsMs = storedValue(window);
  if (endsMs === undefined || endsMs === "-" || storedValue(sku) !== "+") return "NOT_FOUND";
  return Number(endsMs) <= nowMs ? "ENDED" : "LIVE";
}

/** Every activity's entries as the directory holds them (id → field → value without its position). */
export async function readDirectory(redis: FlashgateRedis): Promise<Map<number, Map<string, string>>> {
  const activities = (await redis.smembers(directoryKeys.index)).map(Number);
  const directory = new Map<number, Map<string, string>>();
  for (let i = 0; i < activities.length; i += entriesPerCall) {
    const chunk = activities.slice(i, i + entriesPerCall);
    const pipeline = redis.pipeline();
    for (const activityId of chunk) pipeline.hgetall(directoryKeys.activity(activityId));
    const replies = (await pipeline.exec()) ?? [];
    for (const [index, [error, fields]] of replies.entries()) {
      if (error) throw error;
      const stored = Object.entries(fields as Record<string, string>);
      directory.set(chunk[index], new Map(stored.map(([name, value]) => [name, storedValue(value) ?? ""])));
    }
  }
  return directory;
}

/** Entries of the directory's fields that say something exists: what a full load compares with MySQL. */
export function presentEntries(fields: Map<string, string>): { window: boolean; skus: number[] } {
  const skus: number[] = [];
  for (const [name, value] of fields)
    if (name.startsWith("s:") && value === "+") skus.push(Number(name.slice(2)));
  return { window: (fields.get(windowField) ?? "-") !== "-", skus };
}

/** The directory holds everything MySQL did at its last full load, and CDC keeps it so. */
export const markDirectoryComplete = (redis: FlashgateRedis) =>
  redis.hset(directoryKeys.state, "complete", String(Date.now()));

/** Its entries may be wrong (the binlog source changed): lookups go to MySQL until the next full load. */
export const markDirectoryIncomplete = (redis: FlashgateRedis) => redis.hdel(directoryKeys.state, "complete");

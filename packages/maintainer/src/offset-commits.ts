import type { Logger } from "@flashgate/logger";

/** What committing needs of a consumed record. */
export interface Committable {
  topic: string;
  partition: number;
  offset: bigint;
  commit(): unknown;
}

/**
 * Commits each partition's last applied record once Redis holds a batch's effect. A commit that fails
 * (a broker or the group's coordinator lost for a moment) is tried again with each next batch until it
 * holds or a later record of its partition stands for it: a partition that gets no more records would
 * otherwise keep its committed offset behind its end, and the applied watermark, fenced on the group's
 * committed offsets, would never move again. After `maxAttempts` it is given up (the partition was
 * most likely reassigned, and its new owner replays from the last commit that held). A commit that has
 * not settled within `timeoutMs` counts as failed, so that no commit can hold up the apply loop. A
 * record that `live` disowns (its consumer replaced by a reconnection: that consumer's commits never
 * settle, and the new one resumes from the last commit that held) is not committed.
 */
export function createOffsetCommits(
  logger: Logger,
  {
    maxAttempts = 30,
    timeoutMs = 10_000,
    live = (_record: Committable) => true,
  }: { maxAttempts?: number; timeoutMs?: number; live?: (record: Committable) => boolean } = {},
) {
  const owed = new Map<string, { record: Committable; attempts: number }>();

  return {
    async commit(batch: Committable[]): Promise<void> {
      const last = new Map(owed);
      for (const record of batch) last.set(`${record.topic}:${record.partition}`, { record, attempts: 0 });
      owed.clear();
      await Promise.all(
        [...last].map(async ([partition, { record, attempts }]) => {
          if (!live(record)) return;
          try {
            await settled(record.commit(), timeoutMs);
          } catch (error) {
            if (attempts + 1 >= maxAttempts) {
              logger.error(
                {
                  err: (error as Error).message,
                  partition,
                  offset: String(record.offset),
                  attempts: attempts + 1,
                },
                "offset commit given up; the partition replays from its last commit",
              );
              return;
            }
            if (attempts === 0)
              logger.warn(
                { err: (error as Error).message, partition, offset: String(record.offset) },
                "offset commit failed; committed again with the next batch",
              );
            owed.set(partition, { record, attempts: attempts + 1 });
          }
        }),
      );
    },
    /** Partitions whose last commit has not held yet. */
    owed: () => owed.size,
  };
}

async function settled(commit: unknown, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([commit, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

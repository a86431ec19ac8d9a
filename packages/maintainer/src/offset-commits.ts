import type { Logger } from "@flashgate/logger";

/** What committing needs of a consumed record. */
export interface Committable {
  topic: string;
  partition: number;
  offset: bigint;
  commit(): unknown;
}

/** One partition's commits: at most one sent at a time, and only ever forward. */
interface PartitionCommits<R extends Committable> {
  /** The highest offset the broker accepted. */
  committed: bigint;
  /** The commit sent and not settled yet, and when it was sent. */
  inFlight?: { record: R; settled: Promise<void>; sentAt: number };
  /** The latest applied record not committed yet: sent once nothing of its partition is in flight. */
  next?: { record: R; attempts: number };
}

/**
 * Commits each partition's last applied record once Redis holds a batch's effect, one commit at a time
 * per partition and only ever forward: a commit is sent only when none of its partition is in flight,
 * and only above what the broker accepted — so two batches applied at once (and the commits one owes)
 * never commit a partition's older offset after its newer one. A commit unsettled after `timeoutMs` (a
 * killed group coordinator's) is not stepped over, since the client's own retries could still deliver it
 * after a later one: `onStuck` is told, and the consumer replaced; the group's next generation fences
 * whatever of the old one is still in flight (the broker refuses a commit of an earlier generation), and
 * its records are no longer `live`, so the partition goes on with the new consumer's. Meanwhile the
 * partition's commits wait, and the apply loop does not. What a partition owes is sent as soon as its
 * commit in flight settles, without waiting for another batch:
 * a partition that gets no more records would otherwise keep its committed offset behind its end, and
 * the applied watermark, fenced on the group's committed offsets, would never move again. A commit that
 * fails is tried again with each next batch until it holds or a later record of its partition stands
 * for it; after `maxAttempts` it is given up (the partition was most likely reassigned, and its new
 * owner replays from the last commit that held). No commit holds up the apply loop past `timeoutMs`. A
 * record that `live` disowns (its consumer replaced by a reconnection: that consumer's commits never
 * settle, and the new one resumes from the last commit that held) is not committed, and its commit in
 * flight no longer holds its partition.
 */
export function createOffsetCommits<R extends Committable>(
  logger: Logger,
  {
    maxAttempts = 30,
    timeoutMs = 10_000,
    live = () => true,
    onStuck = () => {},
  }: {
    maxAttempts?: number;
    timeoutMs?: number;
    live?: (record: R) => boolean;
    onStuck?: (record: R) => void;
  } = {},
) {
  const partitions = new Map<string, PartitionCommits<R>>();

  const within = (settled: Promise<void>) => settledWithin(settled, timeoutMs).catch(() => {});

  /** Sends the partition's next commit unless one is in flight; resolves when it settles or times out. */
  function send(name: string, partition: PartitionCommits<R>): Promise<void> {
    const inFlight = partition.inFlight;
    if (inFlight && live(inFlight.record))
      return Date.now() - inFlight.sentAt < timeoutMs ? within(inFlight.settled) : Promise.resolve();
    partition.inFlight = undefined;
    const next = partition.next;
    partition.next = undefined;
    if (!next || !live(next.record) || next.record.offset <= partition.committed) return Promise.resolve();
    const { record, attempts } = next;
    let retryWithNextBatch = false;
    let stuck: NodeJS.Timeout | undefined;
    const settled = Promise.resolve()
      .then(() => record.commit())
      .then(
        () => {
          if (record.offset > partition.committed) partition.committed = record.offset;
        },
        (error: unknown) => {
          if (partition.next) return; // a later record stands for it
          const detail = { err: (error as Error).message, partition: name, offset: String(record.offset) };
          if (attempts + 1 >= maxAttempts) {
            logger.error(
              { ...detail, attempts: attempts + 1 },
              "offset commit given up; the partition replays from its last commit",
            );
            return;
          }
          if (attempts === 0)
            logger.warn(detail, "offset commit failed; committed again with the next batch");
          partition.next = { record, attempts: attempts + 1 };
          retryWithNextBatch = true;
        },
      )
      .finally(() => {
        clearTimeout(stuck);
        if (partition.inFlight?.settled !== settled) return;
        partition.inFlight = undefined;
        // What was applied meanwhile goes now, not with a next batch that may never come.
        if (partition.next && !retryWithNextBatch) void send(name, partition);
      });
    stuck = setTimeout(() => {
      if (partition.inFlight?.settled === settled && live(record)) onStuck(record);
    }, timeoutMs);
    stuck.unref();
    partition.inFlight = { record, settled, sentAt: Date.now() };
    return within(settled);
  }

  return {
    async commit(batch: R[]): Promise<void> {
      for (const record of batch) {
        const name = `${record.topic}:${record.partition}`;
        const partition = partitions.get(name) ?? { committed: -1n };
        partitions.set(name, partition);
        // A record of a replaced consumer stands for nothing: the new one resumes from the last commit.
        const owed = partition.next && live(partition.next.record) ? partition.next.record.offset : -1n;
        if (record.offset > owed) partition.next = { record, attempts: 0 };
      }
      await Promise.all([...partitions].filter(([, p]) => p.next).map(([name, p]) => send(name, p)));
    },
    /** Partitions whose last applied record is not committed yet. */
    owed: () => [...partitions.values()].filter((p) => p.next || p.inFlight).length,
  };
}

async function settledWithin(settled: Promise<void>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([settled, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

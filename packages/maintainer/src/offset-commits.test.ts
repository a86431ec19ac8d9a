import { setTimeout } from "node:timers/promises";
import { createLogger } from "@flashgate/logger";
import { eventually } from "@flashgate/testkit";
import { describe, expect, it } from "vitest";
import { createOffsetCommits } from "./offset-commits.ts";

/** A consumed record whose commit the test decides: what the broker accepted is in `committed`. */
function records(committed: string[], failing: Set<string>) {
  return (topic: string, partition: number, offset: bigint) => ({
    topic,
    partition,
    offset,
    commit: async () => {
      const id = `${topic}:${partition}@${offset}`;
      if (failing.has(id)) throw new Error("NOT_COORDINATOR");
      committed.push(id);
    },
  });
}

describe("offset commits after a batch is applied", () => {
  const logger = createLogger("offset-commits-test", "silent");

  it("commits each partition's last record, and a commit that failed again with the next batch until it holds", async () => {
    const committed: string[] = [];
    const failing = new Set(["sale:1@7"]);
    const record = records(committed, failing);
    const commits = createOffsetCommits(logger);
    await commits.commit([record("sale", 0, 3n), record("sale", 0, 4n), record("sale", 1, 7n)]);
    expect(committed).toEqual(["sale:0@4"]);
    // The next batch has nothing of partition 1 (a quiet partition: no later record would cover it).
    failing.clear();
    await commits.commit([record("heartbeat", 0, 20n)]);
    expect(committed).toEqual(["sale:0@4", "sale:1@7", "heartbeat:0@20"]);
    await commits.commit([record("heartbeat", 0, 21n)]);
    expect(committed.filter((id) => id.startsWith("sale:1"))).toHaveLength(1);
  });

  it("lets a later record of the partition stand for one that failed, and gives up on one that never holds", async () => {
    const committed: string[] = [];
    const failing = new Set(["sale:2@5"]);
    const record = records(committed, failing);
    const commits = createOffsetCommits(logger, { maxAttempts: 3 });
    await commits.commit([record("sale", 2, 5n)]);
    await commits.commit([record("sale", 2, 6n)]);
    expect(committed).toEqual(["sale:2@6"]);

    await commits.commit(
      [record("sale", 3, 9n)].map((r) => ({ ...r, commit: () => Promise.reject(new Error("revoked")) })),
    );
    for (let i = 0; i < 5; i++) await commits.commit([]);
    expect(commits.owed()).toBe(0);
  });

  it("never waits on a commit that cannot settle: a replaced consumer's records are dropped, a silent commit times out", async () => {
    const committed: string[] = [];
    const record = records(committed, new Set());
    const replaced = new Set<unknown>();
    const commits = createOffsetCommits(logger, { timeoutMs: 50, live: (r) => !replaced.has(r) });
    // A commit nobody answers (a closed connection that queues it).
    const never = () => new Promise<void>(() => {});
    const gone = { ...record("sale", 1, 50n), commit: never };
    replaced.add(gone);
    await commits.commit([gone]);
    expect(commits.owed()).toBe(0);
    const silent = { ...record("sale", 4, 8n), commit: never };
    await commits.commit([silent, record("sale", 0, 2n)]);
    expect(committed).toEqual(["sale:0@2"]);
    expect(commits.owed()).toBe(1);
    // Its consumer replaced by a reconnection: its commit can no longer land, and holds nothing back.
    replaced.add(silent);
    await commits.commit([record("sale", 4, 9n)]);
    expect(committed).toEqual(["sale:0@2", "sale:4@9"]);
    expect(commits.owed()).toBe(0);
  });

  it("never steps over a commit unsettled past its timeout: the partition waits, its consumer is replaced, and the new consumer's records go on", async () => {
    const committed: string[] = [];
    const record = records(committed, new Set());
    const replaced = new Set<unknown>();
    const stuck: string[] = [];
    const commits = createOffsetCommits(logger, {
      timeoutMs: 50,
      live: (r) => !replaced.has(r),
      onStuck: (r) => stuck.push(`${r.topic}:${r.partition}@${r.offset}`),
    });
    // A commit the client keeps retrying (a killed coordinator): it may still land, whenever.
    const held = { ...record("sale", 4, 8n), commit: () => new Promise<void>(() => {}) };
    await commits.commit([held]); // returns once its timeout passed
    // Applied after the timeout: not sent, since the held one could land after it and move the offset back.
    const later = record("sale", 4, 9n);
    await commits.commit([later]);
    expect(committed).toEqual([]);
    expect(commits.owed()).toBe(1);
    await eventually(() => expect(stuck).toEqual(["sale:4@8"]));
    // The consumer replaced: the old one's records stand for nothing, the new one resumes from the last commit.
    replaced.add(held);
    replaced.add(later);
    await commits.commit([record("sale", 4, 7n)]);
    expect(committed).toEqual(["sale:4@7"]);
    expect(commits.owed()).toBe(0);
  });

  it("sends one commit at a time per partition: what is applied meanwhile waits, and goes as soon as it settles", async () => {
    const committed: string[] = [];
    const record = records(committed, new Set());
    let deliver: (() => void) | undefined;
    const slow = {
      ...record("sale", 4, 8n),
      commit: () =>
        new Promise<void>((resolve) => {
          deliver = () => {
            committed.push("sale:4@8");
            resolve();
          };
        }),
    };
    const commits = createOffsetCommits(logger, { timeoutMs: 60_000 });
    void commits.commit([slow]);
    // Applied meanwhile, by another handler: not sent while the commit before it may still land.
    const next = commits.commit([record("sale", 4, 9n)]);
    expect(committed).toEqual([]);
    expect(commits.owed()).toBe(1);
    await eventually(() => expect(deliver).toBeDefined());
    deliver?.();
    await next;
    // Sent once the one before settled, with no further batch (a quiet partition).
    await eventually(() => expect(committed).toEqual(["sale:4@8", "sale:4@9"]));
    expect(commits.owed()).toBe(0);
  });

  it("batches of several partitions committed at once never commit a partition's older offset after its newer one", async () => {
    const committed: string[] = [];
    const record = records(committed, new Set());
    let calls = 0;
    // Refused once (the coordinator moving), then slow to answer.
    const first = {
      ...record("sale", 1, 5n),
      commit: async () => {
        if (++calls === 1) throw new Error("NOT_COORDINATOR");
        await setTimeout(20);
        committed.push("sale:1@5");
      },
    };
    const commits = createOffsetCommits(logger);
    await commits.commit([first]);
    expect(commits.owed()).toBe(1);
    // Partition 0's batch and partition 1's next one, applied at once by two handlers.
    await Promise.all([commits.commit([record("sale", 0, 1n)]), commits.commit([record("sale", 1, 6n)])]);
    await eventually(() => expect(commits.owed()).toBe(0));
    expect(committed.filter((id) => id.startsWith("sale:1")).at(-1)).toBe("sale:1@6");
  });
});

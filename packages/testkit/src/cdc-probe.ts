import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { topics } from "@flashgate/cdc";
import { connectClient, describeStatus, firstLines } from "@flashgate/connect";
import { bumpHeartbeat, createPool } from "@flashgate/db";
import { tailLog } from "@flashgate/stack";
import { Consumer, stringDeserializers } from "@platformatic/kafka";
import { stackEnv, testContext } from "./env.ts";
import { eventually } from "./eventually.ts";

/** The heartbeat topic's end offsets summed; -1 before its first record (Connect creates it then). */
async function heartbeatEnds(consumer: Consumer<string, string, string, string>): Promise<bigint> {
  try {
    const ends = (await consumer.listOffsets({ topics: [topics.heartbeat] })).get(topics.heartbeat) ?? [];
    return ends.reduce((sum, end) => sum + end, 0n);
  } catch (error) {
    if (/unknown topic/i.test((error as Error).message)) return -1n;
    throw error;
  }
}

/** Whether a heartbeat committed in MySQL reaches Kafka within `timeoutMs`. */
async function heartbeatReachesKafka(env: Record<string, string>, timeoutMs: number): Promise<void> {
  // The heartbeat row is the cache-maintainer's to write.
  const pool = createPool(env.MAINTAINER_DATABASE_URL, { connectionLimit: 1 });
  const consumer = new Consumer({
    clientId: "cdc-probe",
    groupId: "cdc-probe",
    bootstrapBrokers: env.KAFKA_BROKERS.split(","),
    deserializers: stringDeserializers,
  });
  try {
    const before = await heartbeatEnds(consumer);
    await eventually(
      async () => {
        await bumpHeartbeat(pool);
        if ((await heartbeatEnds(consumer)) <= before) throw new Error("no heartbeat reached Kafka");
      },
      { timeoutMs, intervalMs: 500 },
    );
  } finally {
    await consumer.close().catch(() => {});
    await pool.end();
  }
}

/** Where a run's probe notes that CDC stayed broken after it tried to mend it (cleared by the next run's setup). */
export const unmendedMarker = (home: string) => join(home, "cdc-unmended");

/**
 * Proves that a change committed in MySQL now reaches Kafka through Debezium, so that a file that needs
 * CDC fails once, at its start, naming the broken part and its last log lines — not test by test, each
 * after its own timeout. The file that finds CDC broken fails; the stack is then mended for the files
 * after it (the connector resumed and restarted with its tasks), and if that does not mend it, those
 * files fail at once rather than each after a minute: a broken pipeline costs one timeout per run, not
 * one per file.
 */
export async function proveCdcFlows(timeoutMs = 60_000): Promise<void> {
  const env = stackEnv();
  const paths = testContext().paths;
  const unmended = unmendedMarker(paths.home);
  const known = existsSync(unmended) ? readFileSync(unmended, "utf8") : undefined;
  // A pipeline an earlier file could not mend is not waited on long again.
  const waitMs = known ? 5000 : timeoutMs;
  try {
    await heartbeatReachesKafka(env, waitMs);
    rmSync(unmended, { force: true });
    return;
  } catch (error) {
    const connect = connectClient(env.KAFKA_CONNECT_URL);
    const status = await connect.statusIfExists("flashgate-sale").catch((e: Error) => e);
    const state =
      status instanceof Error
        ? `Kafka Connect: ${status.message}`
        : `connector ${describeStatus(status)}${status?.tasks.map((task) => (task.trace ? ` — ${firstLines(task.trace, 1)}` : "")).join("") ?? ""}`;
    const logs = join(paths.logs, "connect.log");
    const broken = `a heartbeat committed in MySQL did not reach Kafka in ${waitMs / 1000} s (${(error as Error).message}).\n${state}\nlast lines of ${logs}:\n${tailLog(logs, 20)}`;
    if (known) throw new Error(`CDC is still broken, as an earlier file found it:\n${known}\nnow: ${broken}`);
    // Resumed (a stopped or paused connector stays so) and restarted with its tasks (a FAILED one stays FAILED).
    const mended = await connect
      .resume("flashgate-sale")
      .then(() => connect.restart("flashgate-sale", false))
      .then(() => heartbeatReachesKafka(env, timeoutMs))
      .then(
        () => true,
        () => false,
      );
    if (!mended) writeFileSync(unmended, broken);
    throw new Error(
      `CDC is broken before this file starts: ${broken}\n${mended ? "Restarting the connector mended it for the files after this one." : "Restarting the connector did not mend it."}`,
    );
  }
}

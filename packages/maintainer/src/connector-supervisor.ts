import { createHash } from "node:crypto";
import { binlogSourceKey, cdcKeys, type FlashgateRedis, takeLease } from "@flashgate/cache";
import { ConnectError, type ConnectorControl, type ConnectorStatus, redactedTrace } from "@flashgate/connect";
import { binlogPositionLost, gtidsWithoutLostCommits } from "@flashgate/db";
import type { Logger } from "@flashgate/logger";
import { recordIncident } from "@flashgate/sync";
import type { Pool } from "mysql2/promise";
import type { MaintainerMetrics } from "./metrics.ts";

export interface RestartBackoff {
  /** The wait after the first restart; each further one doubles it. */
  firstMs: number;
  maxMs: number;
  /** Running this long without a failure forgets the count: the next failure is restarted at once. */
  resetAfterMs: number;
}

export const defaultBackoff: RestartBackoff = { firstMs: 2000, maxMs: 180_000, resetAfterMs: 60_000 };

/**
 * A heartbeat committed this recently has been applied: Debezium is reading the binlog now, whatever its
 * stored offset says (flushed up to `offset.flush.interval.ms` ago, it can name a file a DBA's
 * `PURGE BINARY LOGS` just removed while the reader is in a newer one).
 */
const readingWithinMs = 10_000;
/** How long one lost offset, once reset, holds off another instance that read the same one. */
const repositionHoldMs = 60_000;
/** A resetting maintainer renews its lease (its proof of life) this often; it lapses after three missed renewals. */
const resetterRenewMs = 3000;

const failedPart = (status: ConnectorStatus) =>
  status.connector.state === "FAILED"
    ? { part: "connector", trace: status.connector.trace }
    : status.tasks
        .filter((task) => task.state === "FAILED")
        .map((task) => ({ part: `task ${task.id}`, trace: task.trace }))[0];

/**
 * Keeps the Debezium connector reading, with no operator step: Kafka Connect never restarts a FAILED
 * task by itself, and a connector whose stored binlog position the server no longer holds (RESET MASTER,
 * a purge past it, a server with another history) reads nothing while it says RUNNING. Each pass with no
 * fresh heartbeat applied either resets such a position — Debezium then streams on from the server's
 * position now, and the rebuilder loads what committed before from MySQL — or restarts a FAILED
 * connector or task with exponential backoff. The state lives in Redis, so two maintainers doing this
 * act as one.
 */
export function createConnectorSupervisor(deps: {
  /** Connect's REST API, or Strimzi's operator where it owns the connector (strimziConnectorControl). */
  connect: ConnectorControl;
  connector: string;
  pool: Pool;
  redis: FlashgateRedis;
  metrics: MaintainerMetrics;
  logger: Logger;
  backoff?: RestartBackoff;
}) {
  const { connect, connector, pool, redis, metrics, logger } = deps;
  const backoff = deps.backoff ?? defaultBackoff;
  let unreachableSince: number | undefined;

  async function repositionIfLost(): Promise<boolean> {
    // A reset binlog is judged at once: heartbeats read from the new history past the old offset prove
    // nothing, and its coordinates look held as soon as the new history outgrows them.
    const historyReset = await redis.get(cdcKeys.historyReset);
    const heartbeatAt = Number((await redis.get(cdcKeys.heartbeatApplied)) ?? 0);
    if (!historyReset && Date.now() - heartbeatAt < readingWithinMs) return false;
    const offset = await connect.sourceOffset(connector);
    if (!offset) {
      if (historyReset) await redis.del(cdcKeys.historyReset);
      return false;
    }
    if (!historyReset && (await trimLostCommits(offset))) return true;
    const reason = historyReset
      ? `the binlog was reset on its server (seen back at ${historyReset}): the stored offset is from the history before`
      : await binlogPositionLost(pool, {
          file: typeof offset.file === "string" ? offset.file : undefined,
          pos: typeof offset.pos === "number" ? offset.pos : undefined,
          gtids: typeof offset.gtids === "string" ? offset.gtids : undefined,
        });
    if (!reason) return false;
    const held = createHash("sha256").update(JSON.stringify(offset)).digest("hex").slice(0, 16);
    if ((await redis.set(cdcKeys.reposition(held), "1", "PX", repositionHoldMs, "NX")) !== "OK") return true;
    metrics.connectorRepositions.inc();
    logger.error(
      { connector, reason, offset: { file: offset.file, pos: offset.pos, gtids: offset.gtids } },
      "the connector's binlog position is lost; resetting it: a fresh snapshot, then the binlog from now",
    );
    await recordIncident(redis, { kind: "cdc-repositioned", connector, reason });
    await resetOffsets();
    return true;
  }

  /**
   * After a failover that lost commits, the stored GTID set holds transactions of the old primary that
   * the new one lacks, and Debezium refuses to start from it ("no longer available"). Those are taken out
   * of it: the connector resumes where it was, with no reset and no snapshot.
   */
  async function trimLostCommits(offset: Record<string, unknown>): Promise<boolean> {
    if (typeof offset.gtids !== "string" || !offset.gtids.trim()) return false;
    const trim = await gtidsWithoutLostCommits(pool, offset.gtids);
    if (!trim) return false;
    const held = createHash("sha256").update(JSON.stringify(offset)).digest("hex").slice(0, 16);
    if ((await redis.set(cdcKeys.reposition(held), "1", "PX", repositionHoldMs, "NX")) !== "OK") return true;
    metrics.connectorGtidTrims.inc();
    logger.error(
      { connector, lost: trim.lost },
      "the connector's GTID set holds transactions a failover lost; taking them out of it, so it streams on from where it was",
    );
    await recordIncident(redis, { kind: "cdc-lost-commits-trimmed", connector, lost: trim.lost });
    // Stopped for the trim as for a reset: a maintainer killed meanwhile leaves the mark, and the next
    // finishes it as a reset (the connector streams from now, the rebuild loads what it skipped).
    await whileStopping(() =>
      connect.alterSourceOffset(connector, (stored) => ({ ...stored, gtids: trim.trimmed })),
    );
    return true;
  }

  /** Stops the connector, deletes its offsets and resumes it (see whileStopping). */
  async function resetOffsets(): Promise<void> {
    await whileStopping(async () => {
      await connect.resetOffsets(connector);
      // The connector streams on from the server's position now, with no snapshot (snapshot.mode
      // no_data): what committed before that, since its lost position, comes from MySQL.
      await redis.hset(binlogSourceKey, "reset-rebuild", "pending");
      await redis.del(cdcKeys.historyReset);
    });
  }

  /**
   * Runs work that stops the connector and resumes it, under a lease and with a mark that outlives this
   * process: a maintainer killed while the connector stands stopped by it leaves the mark and no proof
   * of life, and the next supervisor to look finishes it with a reset (nobody else would start a stopped
   * connector). Nothing runs while another maintainer holds the lease.
   */
  async function whileStopping(work: () => Promise<void>): Promise<void> {
    const lease = await takeLease(redis, cdcKeys.resetter, 3 * resetterRenewMs);
    if (!lease) return;
    let lapsed = false;
    const renew = setInterval(async () => {
      if (lapsed || (await lease.renew().catch(() => true))) return;
      // Stalled past its life (a pause, a Redis failover): another maintainer may be resetting now.
      lapsed = true;
      logger.warn({ connector }, "this maintainer's reset lease lapsed; another may finish the reset");
    }, resetterRenewMs);
    try {
      if (await lease.mark(cdcKeys.resetting)) await work();
    } finally {
      clearInterval(renew);
      await lease.release();
    }
  }

  /** A reset left unfinished by a maintainer that died: finished if the connector still stands stopped. */
  async function finishAbandonedReset(status: ConnectorStatus): Promise<boolean> {
    if (!(await redis.get(cdcKeys.resetting)) || (await redis.exists(cdcKeys.resetter))) return false;
    if (status.connector.state !== "STOPPED") {
      // Resumed meanwhile (an operator): the mark is stale, and a later stop is the operator's own.
      await redis.del(cdcKeys.resetting);
      return false;
    }
    logger.error(
      { connector },
      "a reset of the connector's offsets was left unfinished by its maintainer; finishing it",
    );
    await resetOffsets();
    return true;
  }

  async function restartIfFailed(status: ConnectorStatus): Promise<void> {
    const failed = failedPart(status);
    if (!failed) {
      // Running a while since the last failure anyone saw: the next one is restarted at once again.
      if (!status.tasks.every((task) => task.state === "RUNNING")) return;
      await redis.set(cdcKeys.runningSince, String(Date.now()), "NX");
      const since = Number(await redis.get(cdcKeys.runningSince));
      if (Date.now() - since >= backoff.resetAfterMs) await redis.del(cdcKeys.restarts);
      return;
    }
    await redis.del(cdcKeys.runningSince);
    const attempts = Number((await redis.get(cdcKeys.restarts)) ?? 0);
    const waitAfter = Math.min(backoff.maxMs, backoff.firstMs * 2 ** attempts);
    // The gate is the backoff: whoever sets it restarts now, and nobody may again until it expires.
    if ((await redis.set(cdcKeys.restartGate, "1", "PX", waitAfter, "NX")) !== "OK") return;
    await redis.incr(cdcKeys.restarts);
    metrics.connectorRestarts.inc();
    logger.error(
      {
        connector,
        part: failed.part,
        attempt: attempts + 1,
        nextRestartInMs: waitAfter,
        cause: redactedTrace(failed.trace),
      },
      "connector FAILED; restarting it",
    );
    await connect.restart(connector, true);
  }

  /** The states seen, as metrics: what the alert on a stopped connector and the dashboard read. */
  function publish(status: ConnectorStatus | "unreachable" | undefined) {
    metrics.connectorState.reset();
    metrics.connectorRunning.reset();
    if (status === "unreachable") metrics.connectorRunning.set({ connector, task: "unreachable" }, 0);
    if (typeof status !== "object") return;
    for (const [task, state] of [
      ["connector", status.connector.state],
      ...status.tasks.map((t) => [String(t.id), t.state]),
    ]) {
      metrics.connectorState.set({ connector, task, state }, 1);
      metrics.connectorRunning.set({ connector, task }, state === "RUNNING" ? 1 : 0);
    }
  }

  /** One pass; Kafka Connect unreachable is logged once per outage, not thrown. */
  async function check(): Promise<void> {
    let status: ConnectorStatus | undefined;
    try {
      status = await connect.statusIfExists(connector);
    } catch (error) {
      if (!(error instanceof ConnectError) || error.kind !== "unreachable") throw error;
      if (unreachableSince === undefined) logger.warn({ err: error.message }, "Kafka Connect unreachable");
      unreachableSince ??= Date.now();
      publish("unreachable");
      return;
    }
    publish(status);
    if (unreachableSince !== undefined) {
      logger.info({ downMs: Date.now() - unreachableSince }, "Kafka Connect reachable again");
      unreachableSince = undefined;
    }
    if (!status || (await finishAbandonedReset(status))) return;
    // Paused or stopped (unless by an unfinished reset): the operator's to resume.
    if (!["RUNNING", "FAILED"].includes(status.connector.state)) return;
    if (await repositionIfLost()) return;
    await restartIfFailed(status);
  }

  return { check };
}

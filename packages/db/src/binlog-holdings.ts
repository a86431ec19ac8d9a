import type { Pool, RowDataPacket } from "mysql2/promise";

/** A binlog reader's stored position, as Debezium keeps it (MySQL: GTID set; MariaDB: domain-server-seq list). */
export interface ReaderPosition {
  file?: string;
  pos?: number;
  gtids?: string;
}

/** MariaDB GTIDs `domain-server-seq`: the highest sequence number of each domain. */
const mariadbSequences = (gtids: string) => {
  const sequences = new Map<string, bigint>();
  for (const gtid of gtids.split(",").map((part) => part.trim())) {
    const match = /^(\d+)-\d+-(\d+)$/.exec(gtid);
    if (!match) continue;
    const seq = BigInt(match[2]);
    if (seq > (sequences.get(match[1]) ?? -1n)) sequences.set(match[1], seq);
  }
  return sequences;
};

/**
 * Why this server can no longer serve a binlog reader from `position` — its file gone or shorter than the
 * position (RESET MASTER, a purge, another server), or its GTIDs ahead of the server's or purged from it —
 * or undefined while it can. A reader in that state reads nothing, or skips every transaction whose
 * reused GTID it believes it has seen.
 */
export async function binlogPositionLost(pool: Pool, position: ReaderPosition): Promise<string | undefined> {
  const [logs] = await pool.query<RowDataPacket[]>("SHOW BINARY LOGS");
  if (position.file) {
    const log = logs.find((row) => row.Log_name === position.file);
    const held = logs.length ? `${logs[0].Log_name} to ${logs[logs.length - 1].Log_name}` : "none";
    if (!log) return `binlog ${position.file} is not on the server (it holds ${held})`;
    if (position.pos !== undefined && position.pos > Number(log.File_size))
      return `binlog ${position.file} has ${log.File_size} bytes, the reader is at ${position.pos}`;
  }
  if (!position.gtids?.trim()) return undefined;
  const [[version]] = await pool.query<RowDataPacket[]>("SELECT VERSION() AS version");
  if (String(version.version).includes("MariaDB")) {
    const [[row]] = await pool.query<RowDataPacket[]>("SELECT @@GLOBAL.gtid_binlog_pos AS pos");
    const server = mariadbSequences(String(row.pos ?? ""));
    for (const [domain, seq] of mariadbSequences(position.gtids))
      if ((server.get(domain) ?? 0n) < seq)
        return `the reader's GTID ${domain}-…-${seq} is ahead of the server's (${row.pos || "none"})`;
    return undefined;
  }
  const [[row]] = await pool.query<RowDataPacket[]>(
    "SELECT GTID_SUBSET(?, @@GLOBAL.gtid_executed) AS held, GTID_SUBTRACT(@@GLOBAL.gtid_purged, ?) AS missing",
    [position.gtids, position.gtids],
  );
  if (!Number(row.held)) return "the reader's GTID set is not within the server's (gtid_executed)";
  if (String(row.missing ?? "") !== "")
    return `the server purged GTIDs the reader has not read: ${row.missing}`;
  return undefined;
}

const mysqlGtidSet = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:/i;

/**
 * A MySQL reader's GTID set once the transactions of other servers that this server lacks are taken out
 * of it — what a failover lost (the old primary committed them, the new one never received them) — or
 * undefined when nothing is to be taken out that way: every GTID held, or one of this server's own
 * missing (its binlog was reset), which no trimming repairs. A set so trimmed names exactly what the
 * reader has read that this server holds: nothing is read again, nothing skipped.
 */
export async function gtidsWithoutLostCommits(
  pool: Pool,
  gtids: string,
): Promise<{ trimmed: string; lost: string } | undefined> {
  // MariaDB's GTIDs (domain-server-sequence) name no server's whole history: nothing to take out.
  if (!mysqlGtidSet.test(gtids.trim())) return undefined;
  const [[row]] = await pool.query<RowDataPacket[]>(
    "SELECT GTID_SUBTRACT(?, @@GLOBAL.gtid_executed) AS lost, @@server_uuid AS uuid",
    [gtids],
  );
  const lost = String(row.lost ?? "").replace(/\s/g, "");
  if (!lost || lost.toLowerCase().includes(String(row.uuid).toLowerCase())) return undefined;
  const [[trimmed]] = await pool.query<RowDataPacket[]>("SELECT GTID_SUBTRACT(?, ?) AS gtids", [gtids, lost]);
  return { trimmed: String(trimmed.gtids).replace(/\s/g, ""), lost };
}

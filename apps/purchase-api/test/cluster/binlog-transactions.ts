import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const gtidEvent = 33;
const tableMapEvent = 19;
const headerBytes = 19;

/**
 * The transactions a MySQL data dir's binlog files hold, read from the files themselves (a killed
 * server's included): each GTID with the tables its row events touched. The test's own reading of what
 * the old primary committed, independent of CDC and of the code under test.
 */
export function binlogTransactions(dataDir: string): Map<string, Set<string>> {
  const transactions = new Map<string, Set<string>>();
  const files = readdirSync(dataDir)
    .filter((name) => /^binlog\.\d+$/.test(name))
    .sort();
  let current: Set<string> | undefined;
  for (const file of files) {
    const bytes = readFileSync(join(dataDir, file));
    // A 4-byte magic number, then events: a 19-byte header whose bytes 9–12 give the event's whole size.
    for (let at = 4; at + headerBytes <= bytes.length; ) {
      const type = bytes[at + 4];
      const size = bytes.readUInt32LE(at + 9);
      if (size < headerBytes || at + size > bytes.length) break;
      const body = at + headerBytes;
      if (type === gtidEvent) {
        // flags (1), the server's uuid (16), the transaction's number (8, little-endian).
        const uuid = bytes.subarray(body + 1, body + 17).toString("hex");
        const number = bytes.readBigUInt64LE(body + 17);
        const gtid = `${uuid.slice(0, 8)}-${uuid.slice(8, 12)}-${uuid.slice(12, 16)}-${uuid.slice(16, 20)}-${uuid.slice(20)}:${number}`;
        current = new Set();
        transactions.set(gtid, current);
      } else if (type === tableMapEvent && current) {
        // table id (6), flags (2), the schema's name (length, bytes, 0), the table's name (length, bytes).
        const schemaLength = bytes[body + 8];
        const tableAt = body + 9 + schemaLength + 1;
        current.add(bytes.subarray(tableAt + 1, tableAt + 1 + bytes[tableAt]).toString("utf8"));
      }
      at += size;
    }
  }
  return transactions;
}

import type { Pool } from "mysql2/promise";

/**
 * Bumps the one heartbeat row. The maintainer does it every second: the change travels the whole
 * pipeline (binlog → Debezium → Kafka → maintainer), so commit-to-apply lag is measured in milliseconds
 * even when no one is buying, and the applied watermark keeps advancing on a quiet database. It is the
 * row's only writer (the connector runs no heartbeat query of its own).
 */
export async function bumpHeartbeat(pool: Pool): Promise<void> {
  await pool.query(
    "INSERT INTO cdc_heartbeat (id, beat_at) VALUES (1, NOW(3)) ON DUPLICATE KEY UPDATE beat_at = NOW(3)",
  );
}

/** Topic layout of the flashgate-sale connector (connectors/flashgate-mysql.json and flashgate-mariadb.json). */
export const topics = {
  /** sale_stock and sale_order, keyed by (activity_id, sku_id): one SKU's changes stay in commit order. */
  sale: "flashgate.sale",
  activity: "flashgate.activity",
  heartbeat: "flashgate.heartbeat",
  deadLetters: "flashgate.cache-maintainer.dlq",
} as const;

/**
 * Partitions of every CDC topic: up to this many maintainer instances share the work. The connector
 * files ask Connect for the same number (`topic.creation.default.partitions`; a test compares them).
 */
export const topicPartitions = 6;

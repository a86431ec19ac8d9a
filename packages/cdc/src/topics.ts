/** Topic layout of the flashgate-sale connector (connectors/flashgate-mysql.json and flashgate-mariadb.json). */
export const topics = {
  /** sale_stock and sale_order, keyed by (activity_id, sku_id): one SKU's changes stay in commit order. */
  sale: "flashgate.sale",
  activity: "flashgate.activity",
  heartbeat: "flashgate.heartbeat",
  deadLetters: "flashgate.cache-maintainer.dlq",
} as const;

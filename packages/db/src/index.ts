export { appDbUser, databaseName, dbaDbUser, debeziumDbUser, maintainerDbUser } from "./accounts.ts";
export { binlogPositionLost, gtidsWithoutLostCommits, type ReaderPosition } from "./binlog-holdings.ts";
export { type BinlogSource, binlogCoordinates, readBinlogSource } from "./binlog-source.ts";
export { skusChangedSince } from "./changed-skus.ts";
export { isConnectionLoss, isDatabaseUnavailable, isDuplicateKey, serverErrors } from "./errors.ts";
export { bumpHeartbeat } from "./heartbeat.ts";
export {
  type CloseResult,
  closeAllExpiredOrders,
  closeExpiredOrders,
  closeOrder,
  type PaidOrder,
  type PaymentDecision,
  type PaymentEvent,
  type PaymentRecord,
  recordPayment,
} from "./lifecycle.ts";
export { liveSkus } from "./live-skus.ts";
export {
  countLostChanges,
  executedGtids,
  type GtidSet,
  holdsGtid,
  type LostChange,
  lostChanges,
  parseGtidSet,
  recordLostChanges,
} from "./lost-changes.ts";
export { type MigrateOptions, migrate } from "./migrate.ts";
export { type Migration, readMigrations } from "./migrations.ts";
export {
  findOrder,
  findPurchase,
  type Order,
  type OrderState,
  orderStates,
  type SoldOutSnapshot,
  soldOutBuyers,
} from "./orders.ts";
export { createPool, warmPool } from "./pool.ts";
export {
  DecisionConflictError,
  findReplay,
  OutcomeUnknownError,
  type PurchaseDecision,
  type PurchaseInput,
  placeOrder,
  placeOrders,
} from "./purchase.ts";
export { type ReplicaStatus, readReplicaStatus } from "./replica-status.ts";
export { readSaleDirectory, type SaleDirectoryRead } from "./sale-directory.ts";
export { readSku, readSkuSnapshot, type SkuAbsence, type SkuSnapshot } from "./sku-snapshot.ts";
export {
  type ActivityInput,
  type Admission,
  admissions,
  type RestockResult,
  restock,
  type SkuDatabaseView,
  type SkuInput,
  type SkuUpsert,
  skuDatabaseView,
  skuSaleEnd,
  upsertActivity,
  upsertSku,
} from "./stock.ts";

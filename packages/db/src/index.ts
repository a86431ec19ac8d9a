export { type MigrateOptions, migrate } from "./migrate.ts";
export { type Migration, migrations } from "./migrations.ts";
export { findBlockingOrder, findOrder, type Order, type OrderState } from "./orders.ts";
export { createPool, warmPool } from "./pool.ts";
export { OutcomeUnknownError, type PurchaseDecision, type PurchaseInput, placeOrder } from "./purchase.ts";
export { readSkuSnapshot, type SkuSnapshot } from "./sku-snapshot.ts";

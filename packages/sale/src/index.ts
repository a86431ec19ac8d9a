export { driftVerdicts } from "@flashgate/sync";
export { type BackOffice, createBackOffice } from "./back-office.ts";
export { createDecisionBatcher, type TransactionOutcome } from "./decision-batcher.ts";
export { createOverloadGuard, OverloadedError, type OverloadGuard } from "./overload-guard.ts";
export {
  createPaymentService,
  type PaymentOutcome,
  type PaymentResult,
  type PaymentService,
  paymentOutcomes,
} from "./payments.ts";
export {
  createPurchaseService,
  type PurchaseObserver,
  type PurchaseQueueOptions,
  type PurchaseService,
} from "./purchase.ts";
export { createQueueWriter, type QueueWriterObserver } from "./queue-writer.ts";
export {
  type DecidedResult,
  type PurchaseResult,
  type Refusal,
  type RefusalCode,
  refusalCodes,
  refusals,
} from "./refusals.ts";
export { createSkuWindows, type SkuWindow } from "./sku-window.ts";
export { createSoldOutShortcut } from "./sold-out-shortcut.ts";
export type { Ticket } from "./ticket.ts";
export { createTicketService, type TicketService, type TicketStanding } from "./tickets.ts";

export type { Kafka } from "kafkajs";
export { type KafkaSecurity, kafkaClient } from "./client.ts";
export {
  createQueueProducer,
  ensurePurchaseQueue,
  followQueueBacklog,
  purchaseQueue,
  type QueueBacklog,
  type QueuedBuyer,
  type QueueProducer,
  QueueUnavailableError,
  runQueueWriter,
} from "./purchase-queue.ts";

export {
  type BinlogPosition,
  binlogPosition,
  type ChangeEvent,
  type ChangeOp,
  EnvelopeError,
  parseChange,
} from "./envelope.ts";
export {
  type ActivityChange,
  type SaleChange,
  type SkuChange,
  toActivityChange,
  toSaleChange,
} from "./sale-changes.ts";
export { topicPartitions, topics } from "./topics.ts";

export {
  type BinlogPosition,
  binlogPosition,
  type ChangeEvent,
  type ChangeOp,
  EnvelopeError,
  parseChange,
} from "./envelope.ts";
export { topics } from "./topics.ts";

export {
  type Applier,
  createApplier,
  type DeadLetter,
  type InboundRecord,
} from "./applier.ts";
export { createCdcFallback } from "./cdc-fallback.ts";
export { createConnectorSupervisor, defaultBackoff, type RestartBackoff } from "./connector-supervisor.ts";
export { consumerGroup, type RunningConsumer, startConsumer } from "./consumer.ts";
export { createDatabaseWatch } from "./database-watch.ts";
export { createDeadLetterSink, type DeadLetterSink } from "./dead-letters.ts";
export { createDriftCheck } from "./drift-check.ts";
export { createLostCommits, lostCommitGroupPrefix } from "./lost-commits.ts";
export { createMaintainerMetrics, type MaintainerMetrics } from "./metrics.ts";
export { createRebuilder, type Rebuilder } from "./rebuild.ts";
export { ensureTopics } from "./topics.ts";

export * from "./rest.ts";
export { closedSnapshotWindows, requestIncrementalSnapshot, type SnapshotRequest } from "./snapshot.ts";
export { workerSettings } from "./worker.ts";

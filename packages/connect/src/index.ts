export {
  inClusterAccess,
  type KubernetesAccess,
  type KubernetesApi,
  KubernetesError,
  kubernetesApi,
  serviceAccountDir,
} from "./kubernetes.ts";
export * from "./rest.ts";
export { closedSnapshotWindows, requestIncrementalSnapshot, type SnapshotRequest } from "./snapshot.ts";
export {
  type ConnectorControl,
  offsetsConfigMap,
  offsetsConfigMapKey,
  type StrimziConnector,
  strimziAnnotations,
  strimziConnectorControl,
} from "./strimzi.ts";
export { workerGarbageCollector, workerSettings } from "./worker.ts";

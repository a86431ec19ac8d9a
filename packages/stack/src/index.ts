export { appEnv, maintainerEnv } from "./components/app.ts";
export { connectorEnv, connectUrl } from "./components/connect.ts";
export { ensureMysqlServer } from "./components/database.ts";
export {
  adminConnection,
  databaseNodeName,
  databaseNodes,
  primaryNode,
} from "./components/database-nodes.ts";
export { replicaState } from "./components/database-replication.ts";
export { kafkaBootstrap } from "./components/kafka.ts";
export { dashboardRedisUser, redisUrl } from "./components/redis.ts";
export { parseEnvFile, writeComposeEnv } from "./compose-env.ts";
export {
  type DatabaseEngine,
  databaseEngineOf,
  databaseEngines,
  type StackConfig,
  stackPorts,
  type Topology,
  topologies,
} from "./config.ts";
export type { Component, StackContext } from "./context.ts";
export { failover, type RoleChange, switchover } from "./database-roles.ts";
export { isPortOpen } from "./net.ts";
export { defaultHome, repoRoot, sideStackHome, stackPaths } from "./paths.ts";
export { writePrivateFile } from "./private-file.ts";
export { readPid, tailLog } from "./processes.ts";
export { consoleProgress, type Progress, silentProgress } from "./progress.ts";
export type { StackSecrets } from "./secrets.ts";
export * from "./stack.ts";
export { instanceName, instancePort } from "./topology.ts";
export { StackError, waitFor } from "./wait.ts";

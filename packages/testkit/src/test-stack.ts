import { join } from "node:path";
import { testStackPorts } from "@flashgate/config";
import { repoRoot } from "@flashgate/stack";

/** The test stack lives on its own ports and data dir, so `npm test` never touches a developer's stack. */
export const testStackEnv: Record<string, string> = {
  FLASHGATE_HOME: join(repoRoot, ".flashgate-test"),
  FLASHGATE_MARIADB_PORT: String(testStackPorts.mariadb),
  FLASHGATE_REDIS_PORT: String(testStackPorts.redis),
  FLASHGATE_KAFKA_PORT: String(testStackPorts.kafka),
  FLASHGATE_KAFKA_CONTROLLER_PORT: String(testStackPorts.kafkaController),
  FLASHGATE_CONNECT_PORT: String(testStackPorts.connect),
  FLASHGATE_API_PORT: String(testStackPorts.purchaseApi),
  FLASHGATE_MAINTAINER_PORT: String(testStackPorts.cacheMaintainer),
  FLASHGATE_DASHBOARD_PORT: String(testStackPorts.dashboard),
};

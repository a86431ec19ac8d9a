import { parseConfig, stackConfigSchema, testStackPorts } from "@flashgate/config";
import { sideStackHome } from "@flashgate/stack";

/** MySQL 8 unless FLASHGATE_DB=mariadb: CI runs the suite once on each. */
export const testEngine = parseConfig(
  stackConfigSchema.pick({ FLASHGATE_DB: true }),
  process.env,
).FLASHGATE_DB;

/** The test stack lives on its own ports and data dir, so `npm test` never touches a developer's stack. */
export const testStackEnv: Record<string, string> = {
  FLASHGATE_HOME: sideStackHome("test", testEngine),
  FLASHGATE_DB: testEngine,
  FLASHGATE_DB_PORT: String(testStackPorts.database),
  FLASHGATE_REDIS_PORT: String(testStackPorts.redis),
  FLASHGATE_KAFKA_PORT: String(testStackPorts.kafka),
  FLASHGATE_KAFKA_CONTROLLER_PORT: String(testStackPorts.kafkaController),
  FLASHGATE_CONNECT_PORT: String(testStackPorts.connect),
  FLASHGATE_API_PORT: String(testStackPorts.purchaseApi),
  FLASHGATE_MAINTAINER_PORT: String(testStackPorts.cacheMaintainer),
  FLASHGATE_DASHBOARD_PORT: String(testStackPorts.dashboard),
};

import { databaseEngineOf } from "@flashgate/config";
import { sideStackHome } from "@flashgate/stack";

/** MySQL 8 unless FLASHGATE_DB=mariadb: CI runs the suite once on each. */
export const testEngine = databaseEngineOf(process.env);

/** The test stack lives on its own ports and data dir, so `npm test` never touches a developer's stack. */
export const testStackEnv: Record<string, string> = {
  FLASHGATE_HOME: sideStackHome("test", testEngine),
  FLASHGATE_DB: testEngine,
  FLASHGATE_DB_PORT: "13307",
  FLASHGATE_REDIS_PORT: "16380",
  FLASHGATE_KAFKA_PORT: "19092",
  FLASHGATE_KAFKA_CONTROLLER_PORT: "19093",
  FLASHGATE_CONNECT_PORT: "18083",
  FLASHGATE_API_PORT: "18080",
  FLASHGATE_MAINTAINER_PORT: "18082",
  FLASHGATE_DASHBOARD_PORT: "18084",
};

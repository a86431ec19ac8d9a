import { databaseEngineOf, sideStackHome } from "@flashgate/stack";

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
  FLASHGATE_API_METRICS_PORT: "18081",
  FLASHGATE_MAINTAINER_PORT: "18082",
  FLASHGATE_DASHBOARD_PORT: "18084",
};

/**
 * The cluster suite's stack (npm run test:cluster): the production topology past one node, with the apps
 * run as the stack's own processes so that a test can kill any of them. Ports of its own: it may run
 * beside the test stack.
 */
export const clusterStackEnv: Record<string, string> = {
  FLASHGATE_HOME: sideStackHome("test-cluster", testEngine),
  FLASHGATE_DB: testEngine,
  FLASHGATE_TOPOLOGY: "cluster",
  FLASHGATE_DB_PORT: "14307",
  FLASHGATE_REDIS_PORT: "17380",
  FLASHGATE_KAFKA_PORT: "11092",
  FLASHGATE_KAFKA_CONTROLLER_PORT: "11093",
  FLASHGATE_CONNECT_PORT: "12083",
  FLASHGATE_API_PORT: "12080",
  FLASHGATE_API_METRICS_PORT: "12081",
  FLASHGATE_MAINTAINER_PORT: "12082",
  FLASHGATE_DASHBOARD_PORT: "12084",
  // Five brokers' and workers' JVMs on two cores: smaller heaps than the single stack's.
  FLASHGATE_KAFKA_HEAP: "384m",
  FLASHGATE_CONNECT_HEAP: "512m",
};

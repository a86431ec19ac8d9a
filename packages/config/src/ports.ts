/** Where the apps listen by default, and Kafka Connect's REST API (docs/architecture.md, Stacks and ports). */
export const defaultPorts = {
  purchaseApi: 8080,
  cacheMaintainer: 8082,
  dashboard: 8084,
  connect: 8083,
} as const;

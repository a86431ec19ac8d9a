import { readFileSync } from "node:fs";
import {
  type ConnectorControl,
  connectClient,
  inClusterAccess,
  kubernetesApi,
  serviceAccountDir,
  strimziConnectorControl,
} from "@flashgate/connect";
import type { MaintainerConfig } from "./config.ts";

/** The supervisor's hands: Connect's REST API, or the KafkaConnector resource that Strimzi's operator carries out. */
export function connectorControl(config: MaintainerConfig): ConnectorControl {
  const rest = connectClient(config.KAFKA_CONNECT_URL);
  if (config.CONNECTOR_CONTROL === "rest") return rest;
  const access = config.KUBERNETES_API_URL
    ? {
        url: config.KUBERNETES_API_URL,
        tokenFile: config.KUBERNETES_TOKEN_FILE ?? `${serviceAccountDir}/token`,
      }
    : inClusterAccess(process.env);
  const namespace =
    config.KUBERNETES_NAMESPACE ?? readFileSync(`${serviceAccountDir}/namespace`, "utf8").trim();
  return strimziConnectorControl({ kubernetes: kubernetesApi(access), namespace, rest });
}

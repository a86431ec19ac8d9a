import { appFields, parseConfig, stackPorts } from "@flashgate/config";
import { z } from "zod";

const dashboardConfigSchema = z.object({
  ...appFields(stackPorts.dashboard),
  KAFKA_CONNECT_URL: z.url().default(`http://127.0.0.1:${stackPorts.connect}`),
  MAINTAINER_URL: z.url().default(`http://127.0.0.1:${stackPorts.cacheMaintainer}`),
  PURCHASE_API_URL: z.url().default(`http://127.0.0.1:${stackPorts.purchaseApi}`),
  SAMPLE_INTERVAL_MS: z.coerce.number().int().min(200).default(2000),
});

export const loadConfig = (env: Record<string, string | undefined>) =>
  parseConfig(dashboardConfigSchema, env);

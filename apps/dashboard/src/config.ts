import { appFields, defaultPorts, parseConfig } from "@flashgate/config";
import { z } from "zod";

const dashboardConfigSchema = z.object({
  ...appFields(defaultPorts.dashboard),
  DASHBOARD_PASSWORD: z.string().min(16, "DASHBOARD_PASSWORD: at least 16 characters"),
  MAINTAINER_URL: z.url().default(`http://127.0.0.1:${defaultPorts.cacheMaintainer}`),
  // The purchase API's operators' port (its METRICS_PORT), where its metrics are.
  PURCHASE_API_METRICS_URL: z.url().default(`http://127.0.0.1:${defaultPorts.purchaseApiMetrics}`),
  SAMPLE_INTERVAL_MS: z.coerce.number().int().min(200).default(2000),
});

export const loadConfig = (env: Record<string, string | undefined>) =>
  parseConfig(dashboardConfigSchema, env);

import { createLogger } from "@flashgate/logger";
import { loadConfig } from "./config.ts";
import { startPurchaseApi } from "./start.ts";

const config = loadConfig(process.env);
const logger = createLogger("purchase-api", config.LOG_LEVEL);
const api = await startPurchaseApi(config, logger);

const shutdown = () => {
  logger.info("shutting down");
  setTimeout(() => process.exit(0), 5000).unref();
  void api.close().then(() => process.exit(0));
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);

import { createLogger } from "@flashgate/logger";
import { loadConfig } from "./config.ts";
import { startMaintainer } from "./start.ts";

const config = loadConfig(process.env);
const logger = createLogger("cache-maintainer", config.LOG_LEVEL);
const maintainer = await startMaintainer(config, logger);

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  logger.info("stopping: finishing the batch in hand, committing, leaving the group");
  setTimeout(() => process.exit(1), 15_000).unref();
  await maintainer.stop();
  process.exit(0);
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);

import { ConfigError } from "@flashgate/config";
import { ConnectError } from "@flashgate/connect";
import { Command } from "commander";
import { registerComposeEnvCommand } from "./commands/compose-env.ts";
import { registerConnectorCommands } from "./commands/connectors.ts";
import { registerDatabaseCommands } from "./commands/db.ts";
import { registerDemoCommand } from "./commands/demo.ts";
import { registerDriftCommands } from "./commands/drift.ts";
import { registerMigrateCommand } from "./commands/migrate.ts";
import { registerSqlCommand } from "./commands/sql.ts";
import { registerStackCommands } from "./commands/stack.ts";
import { registerTokenCommand } from "./commands/token.ts";
import { isStackError } from "./local-stack.ts";

/** Distinct exit codes for scripts: 1 = not all RUNNING (status), 2 = stack/config problem. */
const connectExitCodes = {
  unreachable: 3,
  unknown_connector: 4,
  invalid_file: 5,
  invalid_config: 5,
  refused: 6,
} as const;

const program = new Command("flashgate").description(
  "flashgate: flash sales with MySQL as the truth and a CDC-maintained Redis fast path",
);
registerStackCommands(program);
registerMigrateCommand(program);
registerTokenCommand(program);
registerConnectorCommands(program);
registerDriftCommands(program);
registerDatabaseCommands(program);
registerDemoCommand(program);
registerComposeEnvCommand(program);
registerSqlCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof ConnectError) {
    process.stderr.write(`flashgate: ${error.message}\n`);
    process.exit(connectExitCodes[error.kind]);
  }
  if (isStackError(error) || error instanceof ConfigError) {
    process.stderr.write(`flashgate: ${error.message}\n`);
    process.exit(2);
  }
  throw error;
}

import { ConfigError } from "@flashgate/config";
import { StackError } from "@flashgate/stack";
import { Command } from "commander";
import { registerStackCommands } from "./commands/stack.ts";
import { registerTokenCommand } from "./commands/token.ts";

const program = new Command("flashgate").description(
  "flashgate: flash sales with MySQL as the truth and a CDC-maintained Redis fast path",
);
registerStackCommands(program);
registerTokenCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof StackError || error instanceof ConfigError) {
    process.stderr.write(`flashgate: ${error.message}\n`);
    process.exit(2);
  }
  throw error;
}

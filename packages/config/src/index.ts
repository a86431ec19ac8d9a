export { appFields, int, port, secret } from "./fields.ts";
export { ConfigError, parseConfig } from "./parse.ts";
export {
  type DatabaseEngine,
  databaseEngines,
  type StackConfig,
  stackConfigSchema,
  stackPorts,
  testStackPorts,
} from "./stack.ts";

export { appFields, int, port, secret } from "./fields.ts";
export { ConfigError, parseConfig } from "./parse.ts";
export {
  type DatabaseEngine,
  databaseEngineOf,
  databaseEngines,
  type StackConfig,
  stackConfigSchema,
  stackPorts,
  type Topology,
  topologies,
} from "./stack.ts";

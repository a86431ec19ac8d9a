export { ConfigError, parseConfig } from "./parse.ts";
export { stackConfigSchema, type StackConfig, stackPorts, testStackPorts } from "./stack.ts";
export { port, secret, url } from "./fields.ts";

export { appFields, databaseFields, int, port, secret } from "./fields.ts";
export { ConfigError, parseConfig } from "./parse.ts";
export { defaultPorts } from "./ports.ts";

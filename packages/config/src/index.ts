export { appFields, databaseFields, int, kafkaFields, kafkaSasl, port, secret } from "./fields.ts";
export { ConfigError, parseConfig } from "./parse.ts";
export { defaultPorts } from "./ports.ts";

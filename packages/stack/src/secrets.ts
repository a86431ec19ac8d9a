import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

export interface StackSecrets {
  mariadbRootPassword: string;
  appDbPassword: string;
  redisPassword: string;
  debeziumDbPassword: string;
  authJwtSecret: string;
  adminJwtSecret: string;
  paymentWebhookSecret: string;
}

const generate = (): StackSecrets => {
  const token = () => randomBytes(24).toString("base64url");
  return {
    mariadbRootPassword: token(),
    appDbPassword: token(),
    redisPassword: token(),
    debeziumDbPassword: token(),
    authJwtSecret: token(),
    adminJwtSecret: token(),
    paymentWebhookSecret: token(),
  };
};

/** Local secrets are generated on first start, kept private to the user, and never committed (.flashgate/ is ignored). */
export function loadSecrets(file: string): StackSecrets {
  if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8")) as StackSecrets;
  mkdirSync(dirname(file), { recursive: true });
  const secrets = generate();
  writeFileSync(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  return secrets;
}

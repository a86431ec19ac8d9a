import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { writePrivateFile } from "./private-file.ts";

export interface StackSecrets {
  databaseRootPassword: string;
  appDbPassword: string;
  /** The cache-maintainer's database account. */
  maintainerDbPassword: string;
  redisPassword: string;
  debeziumDbPassword: string;
  dbaDbPassword: string;
  /** A replica's account on its primary (the cluster topology on MySQL). */
  replicationDbPassword: string;
  authJwtSecret: string;
  adminJwtSecret: string;
  paymentWebhookSecret: string;
  /** The operators' password for the dashboard (user `operator`). */
  dashboardPassword: string;
  /** The dashboard's read-only Redis user's. */
  dashboardRedisPassword: string;
}

/** A fresh random secret: 24 bytes, URL-safe. */
export const secretToken = () => randomBytes(24).toString("base64url");

export const generateSecrets = (): StackSecrets => ({
  databaseRootPassword: secretToken(),
  appDbPassword: secretToken(),
  maintainerDbPassword: secretToken(),
  redisPassword: secretToken(),
  debeziumDbPassword: secretToken(),
  dbaDbPassword: secretToken(),
  replicationDbPassword: secretToken(),
  authJwtSecret: secretToken(),
  adminJwtSecret: secretToken(),
  paymentWebhookSecret: secretToken(),
  dashboardPassword: secretToken(),
  dashboardRedisPassword: secretToken(),
});

/** Local secrets are generated on first start, kept private to the user, and never committed (.flashgate/ is ignored). */
export function loadSecrets(file: string): StackSecrets {
  const stored: Partial<StackSecrets> & { mariadbRootPassword?: string } = existsSync(file)
    ? JSON.parse(readFileSync(file, "utf8"))
    : {};
  // A home made before MySQL became the default named its root password after MariaDB.
  const { mariadbRootPassword, ...kept } = stored;
  const secrets: StackSecrets = {
    ...generateSecrets(),
    ...(mariadbRootPassword ? { databaseRootPassword: mariadbRootPassword } : {}),
    ...kept,
  };
  if (JSON.stringify(secrets) !== JSON.stringify(stored)) {
    mkdirSync(dirname(file), { recursive: true });
    writePrivateFile(file, `${JSON.stringify(secrets, null, 2)}\n`);
  } else chmodSync(file, 0o600);
  return secrets;
}

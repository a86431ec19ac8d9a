import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { composeEnv, parseEnvFile, rootPasswordFileOf, writeComposeEnv } from "./compose-env.ts";

describe("the .env docker compose reads", () => {
  it("gets a fresh secret for each variable, distinct, and the engine's profile", () => {
    const env = composeEnv({}, "mariadb");
    expect(env).toMatchObject({
      COMPOSE_PROFILES: "mariadb",
      FLASHGATE_DB: "mariadb",
      COMPOSE_PROJECT_NAME: "flashgate",
    });
    const secrets = [
      env.DB_ROOT_PASSWORD,
      env.APP_DB_PASSWORD,
      env.REDIS_PASSWORD,
      env.AUTH_JWT_SECRET,
      env.ADMIN_JWT_SECRET,
      env.CONNECT_REST_PASSWORD,
    ];
    expect(new Set(secrets).size).toBe(secrets.length);
    for (const secret of secrets) expect(Buffer.byteLength(secret)).toBeGreaterThanOrEqual(32);
  });

  it("keeps what a file already holds (the volumes were made with it), but follows a new engine", () => {
    const env = composeEnv(
      { APP_DB_PASSWORD: "kept", FLASHGATE_DB: "mysql", COMPOSE_PROFILES: "mysql" },
      "mariadb",
    );
    expect(env).toMatchObject({
      APP_DB_PASSWORD: "kept",
      FLASHGATE_DB: "mariadb",
      COMPOSE_PROFILES: "mariadb",
    });
  });

  it("is written private to its owner, completed on a second run without rotating a secret", () => {
    const file = join(mkdtempSync(join(tmpdir(), "compose-env-")), ".env");
    expect(writeComposeEnv(file, "mysql")).toContain("AUTH_JWT_SECRET");
    const first = parseEnvFile(readFileSync(file, "utf8"));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(writeComposeEnv(file, "mysql")).toEqual([]);
    expect(parseEnvFile(readFileSync(file, "utf8"))).toEqual(first);
  });

  it("makes a file that already existed readable by others private too", () => {
    const file = join(mkdtempSync(join(tmpdir(), "compose-env-")), ".env");
    writeFileSync(file, "");
    chmodSync(file, 0o644);
    writeComposeEnv(file, "mysql");
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("keeps the root password out of .env, in a file only its owner's directory leads to", () => {
    const file = join(mkdtempSync(join(tmpdir(), "compose-env-")), ".env");
    expect(writeComposeEnv(file, "mysql")).toContain("DB_ROOT_PASSWORD_FILE");
    const env = parseEnvFile(readFileSync(file, "utf8"));
    expect(env.DB_ROOT_PASSWORD).toBeUndefined();
    expect(env.DB_ROOT_PASSWORD_FILE).toBe(rootPasswordFileOf(file));
    const password = readFileSync(env.DB_ROOT_PASSWORD_FILE, "utf8");
    expect(Buffer.byteLength(password)).toBeGreaterThanOrEqual(32);
    expect(statSync(dirname(env.DB_ROOT_PASSWORD_FILE)).mode & 0o777).toBe(0o700);
    writeComposeEnv(file, "mysql");
    expect(readFileSync(env.DB_ROOT_PASSWORD_FILE, "utf8")).toBe(password);
  });

  it("moves the root password of an .env written before into its file (the volume was made with it)", () => {
    const file = join(mkdtempSync(join(tmpdir(), "compose-env-")), ".env");
    writeFileSync(file, "DB_ROOT_PASSWORD=made-the-volume\nAPP_DB_PASSWORD=kept\n");
    writeComposeEnv(file, "mysql");
    const env = parseEnvFile(readFileSync(file, "utf8"));
    expect(env.DB_ROOT_PASSWORD).toBeUndefined();
    expect(env.APP_DB_PASSWORD).toBe("kept");
    expect(readFileSync(rootPasswordFileOf(file), "utf8")).toBe("made-the-volume");
  });
});

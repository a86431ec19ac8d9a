import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { adminConnection } from "@flashgate/stack";
import { testContext } from "@flashgate/testkit";
import { describe, expect, it } from "vitest";
import { flashgate } from "./cli.ts";

describe("flashgate migrate", () => {
  it("applies the schema through an admin account of your own server, and names what is wrong", async () => {
    const ctx = testContext();
    const password = randomBytes(24).toString("base64url");
    const admin = await adminConnection(ctx);
    await admin.query("CREATE USER IF NOT EXISTS 'fg_dba'@'%' IDENTIFIED BY ?", [password]);
    await admin.query("GRANT ALL PRIVILEGES ON *.* TO 'fg_dba'@'%' WITH GRANT OPTION");
    const own = {
      MIGRATE_ADMIN_URL: `mysql://fg_dba:${password}@127.0.0.1:${ctx.config.FLASHGATE_DB_PORT}`,
      // The stack's own passwords, so that its users keep working after this run.
      APP_DB_PASSWORD: ctx.secrets.appDbPassword,
      MAINTAINER_DB_PASSWORD: ctx.secrets.maintainerDbPassword,
      DEBEZIUM_DB_PASSWORD: ctx.secrets.debeziumDbPassword,
    };
    try {
      const applied = await flashgate.withEnv(own)("migrate");
      expect(applied).toMatchObject({ code: 0, stdout: "up to date\n" });

      const weak = await flashgate.withEnv({ ...own, APP_DB_PASSWORD: "short" })("migrate");
      expect(weak.code).toBe(2);
      expect(weak.stderr).toMatch(/APP_DB_PASSWORD: must be at least 32 bytes/);

      const wrong = await flashgate.withEnv({
        ...own,
        MIGRATE_ADMIN_URL: own.MIGRATE_ADMIN_URL.replace(password, "x"),
      })("migrate");
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toMatch(/MIGRATE_ADMIN_URL: cannot connect \(Access denied/);
      expect(wrong.stderr).not.toContain(password);

      // The password from a file (a compose secret): in no environment.
      const file = join(mkdtempSync(join(tmpdir(), "migrate-")), "admin-password");
      writeFileSync(file, `${password}\n`);
      const fromFile = {
        ...own,
        MIGRATE_ADMIN_URL: `mysql://fg_dba@127.0.0.1:${ctx.config.FLASHGATE_DB_PORT}`,
        MIGRATE_ADMIN_PASSWORD_FILE: file,
      };
      expect(await flashgate.withEnv(fromFile)("migrate")).toMatchObject({ code: 0, stdout: "up to date\n" });
      const missing = await flashgate.withEnv({ ...fromFile, MIGRATE_ADMIN_PASSWORD_FILE: `${file}.gone` })(
        "migrate",
      );
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/MIGRATE_ADMIN_PASSWORD_FILE: cannot read/);
    } finally {
      await admin.query("DROP USER IF EXISTS 'fg_dba'@'%'");
      await admin.end();
    }
  });
});

import { readdirSync, readFileSync } from "node:fs";

/**
 * Schema migrations: `packages/db/migrations/NNN-name.sql`, applied in order and recorded in
 * schema_migrations. A file's statements end with a line holding only ";" (a trigger's body has
 * semicolons of its own). Every statement is safe to re-run, since DDL commits on its own.
 */
export interface Migration {
  version: number;
  name: string;
  statements: string[];
}

const dir = new URL("../migrations/", import.meta.url);

const withoutComments = (sql: string) =>
  sql
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("--"))
    .join("\n")
    .trim();

/** Read when migrating, not when the package is imported: every app imports it, one migrates. */
export const readMigrations = (): Migration[] =>
  readdirSync(dir)
    .filter((file) => /^\d{3}-[a-z0-9-]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      name: file.slice(4, -4).replaceAll("-", " "),
      statements: readFileSync(new URL(file, dir), "utf8").split(/^;$/m).map(withoutComments).filter(Boolean),
    }));

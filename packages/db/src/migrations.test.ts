import { describe, expect, it } from "vitest";
import { readMigrations } from "./migrations.ts";

describe("migration files", () => {
  it("are read in order, each statement whole (a trigger keeps the semicolons of its body)", () => {
    const migrations = readMigrations();
    expect(migrations.map(({ version, name }) => [version, name])).toEqual([
      [1, "sale schema"],
      [2, "rebuy after close"],
      [3, "user scoped keys"],
      [4, "stock version"],
      [5, "lost change"],
      [6, "activity admission"],
    ]);
    expect(migrations[0].statements).toHaveLength(7);
    expect(migrations[0].statements.every((sql) => sql.startsWith("CREATE TABLE IF NOT EXISTS"))).toBe(true);
    const [drop, trigger] = migrations[1].statements;
    expect(drop).toBe("DROP TRIGGER IF EXISTS sale_order_rebuy_on_close");
    expect(trigger).toMatch(/^CREATE TRIGGER sale_order_rebuy_on_close[\s\S]*UUID_SHORT\(\);[\s\S]*END$/);
  });
});

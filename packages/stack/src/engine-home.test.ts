import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { silentProgress } from "./progress.ts";
import { stackContext, up } from "./stack.ts";
import { StackError } from "./wait.ts";

const contextFor = (home: string, engine: string) =>
  stackContext({ env: { FLASHGATE_DB: engine }, home, progress: silentProgress });

describe("one home, one engine", () => {
  it("refuses to start MySQL on a home whose Kafka state belongs to MariaDB, and says what to do", async () => {
    const home = mkdtempSync(join(tmpdir(), "fg-home-"));
    writeFileSync(join(home, "engine"), "mariadb\n");
    const refusal = await up(contextFor(home, "mysql")).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(StackError);
    expect((refusal as Error).message).toMatch(/holds a mariadb stack, not mysql: set FLASHGATE_DB=mariadb/);
    expect(readFileSync(join(home, "engine"), "utf8")).toBe("mariadb\n");
  });
});

import { chmodSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateSecrets, loadSecrets } from "./secrets.ts";

describe("the local secrets file", () => {
  it("is private to its owner even when it existed readable by others, complete or not", () => {
    const dir = mkdtempSync(join(tmpdir(), "secrets-"));
    const complete = join(dir, "complete.json");
    writeFileSync(complete, JSON.stringify(generateSecrets()));
    const partial = join(dir, "partial.json");
    writeFileSync(partial, JSON.stringify({ appDbPassword: "kept" }));
    for (const file of [complete, partial]) {
      chmodSync(file, 0o644);
      loadSecrets(file);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    }
    expect(loadSecrets(partial).appDbPassword).toBe("kept");
  });
});

import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createJwtVerifier } from "@flashgate/auth";
import { repoRoot } from "@flashgate/stack";
import { describe, expect, it } from "vitest";

const home = mkdtempSync(join(tmpdir(), "fg-token-"));
const token = (...args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(
      process.execPath,
      [join(repoRoot, "apps", "cli", "bin", "flashgate.js"), "token", ...args],
      { env: { ...process.env, FLASHGATE_HOME: home } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    ),
  );

// Each case starts the real command, a Node process of its own: seconds on a loaded machine.
describe("flashgate token", { timeout: 60_000 }, () => {
  it("mints a token for the largest user id the API accepts, and refuses a larger one", async () => {
    const minted = await token("--user", String(Number.MAX_SAFE_INTEGER));
    expect(minted.code).toBe(0);
    const secrets = JSON.parse(readFileSync(join(home, "secrets.json"), "utf8"));
    expect(createJwtVerifier(secrets.authJwtSecret)(minted.stdout.trim()).sub).toBe(
      String(Number.MAX_SAFE_INTEGER),
    );

    // 18 digits: a token the API would refuse (sub is not a user id) must not be minted at all.
    const refused = await token("--user", "123456789012345678");
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/a positive integer user id/);
  });
});

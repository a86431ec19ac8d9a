import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { turboConfigs, workspaces } from "./turbo-inputs.ts";

const root = new URL("..", import.meta.url).pathname;

describe("each workspace's turbo.json", () => {
  it("names the workspaces it reaches (npm run turbo:inputs writes them)", () => {
    for (const [file, text] of turboConfigs())
      expect(JSON.parse(readFileSync(join(root, file), "utf8")), file).toEqual(JSON.parse(text));
  });

  it("follows devDependencies too: the database's tests reach the test kit and what it starts", () => {
    const configs = turboConfigs();
    const inputs = JSON.parse(configs.get("packages/db/turbo.json") ?? "{}").tasks["test:fast"].inputs;
    expect(inputs).toContain("$TURBO_ROOT$/packages/testkit/**");
    expect(inputs).toContain("$TURBO_ROOT$/apps/purchase-api/**");
    // Nothing reaches the dashboard: a change there reruns its own checks alone.
    const reachDashboard = workspaces().filter((w) =>
      (configs.get(join(w.dir, "turbo.json")) ?? "").includes("apps/dashboard/"),
    );
    expect(reachDashboard).toEqual([]);
  });
});

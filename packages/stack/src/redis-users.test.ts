import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dashboardRedisUser } from "./components/redis.ts";
import { repoRoot } from "./paths.ts";

describe("the dashboard's Redis user", () => {
  it("has the same rules on the local stack, in compose and on Kubernetes", () => {
    for (const file of ["docker-compose.yml", "deploy/kubernetes/base/redis.yaml"]) {
      const text = readFileSync(join(repoRoot, file), "utf8");
      expect(text, file).toContain(`user ${dashboardRedisUser.name} on >%s`);
      expect(text, file).toContain(`'${dashboardRedisUser.rules}'`);
    }
  });
});

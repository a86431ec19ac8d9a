import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["{apps,packages}/*/src/**/*.test.ts"],
          exclude: ["**/*.int.test.ts", "**/*.redis.test.ts", "**/*.db.test.ts", "**/node_modules/**"],
        },
      },
      // The fast tiers: each against the one real part it uses, started alone (Lua on Redis, SQL on the database).
      {
        test: {
          name: "redis",
          include: ["{apps,packages}/*/src/**/*.redis.test.ts"],
          globalSetup: ["packages/testkit/src/fast-tier-setup.ts"],
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: "database",
          include: ["{apps,packages}/*/src/**/*.db.test.ts"],
          globalSetup: ["packages/testkit/src/fast-tier-setup.ts"],
          // Some files turn the whole server read-only for a moment: no other file may write meanwhile.
          fileParallelism: false,
          hookTimeout: 300_000,
        },
      },
      {
        test: {
          name: "integration",
          include: ["{apps,packages}/*/test/**/*.int.test.ts"],
          globalSetup: ["packages/testkit/src/global-setup.ts"],
          // One real stack on two cores: files run one after another so timings stay meaningful.
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});

import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";

/** The tiers that need at most one real part: what `npm run test:unit` and mutation testing run. */
export const fastTiers: TestProjectInlineConfiguration[] = [
  {
    test: {
      name: "unit",
      include: [
        "{apps,packages}/*/src/**/*.test.ts",
        "ops/test/*.test.ts",
        "scripts/*.test.ts",
        "bench/lib/*.test.ts",
      ],
      exclude: [
        "**/*.int.test.ts",
        "**/*.redis.test.ts",
        "**/*.db.test.ts",
        "**/*.service.test.ts",
        "**/node_modules/**",
      ],
    },
  },
  // Each against the one real part it uses, started alone (Lua on Redis, SQL on the database).
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
  // A service's rules across Redis and the database together, and the API's HTTP behaviour, without CDC.
  {
    test: {
      name: "service",
      include: ["{apps,packages}/*/src/**/*.service.test.ts"],
      globalSetup: ["packages/testkit/src/fast-tier-setup.ts"],
      // The API's stampede and fuzz files send thousands of requests; on two cores beside other files.
      testTimeout: 120_000,
      hookTimeout: 300_000,
    },
  },
];

export default defineConfig({
  test: {
    projects: [
      ...fastTiers,
      {
        test: {
          name: "integration",
          include: [
            "{apps,packages}/*/test/**/*.int.test.ts",
            "ops/test/*.int.test.ts",
            "scripts/*.int.test.ts",
          ],
          globalSetup: ["packages/testkit/src/global-setup.ts"],
          setupFiles: ["packages/testkit/src/cdc-probe-setup.ts"],
          // One real stack on two cores: files run one after another so timings stay meaningful.
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 300_000,
        },
      },
      // The production topology past one node, its processes killed one by one (npm run test:cluster).
      {
        test: {
          name: "cluster",
          include: ["apps/*/test/cluster/*.cluster.test.ts"],
          globalSetup: ["packages/testkit/src/cluster-setup.ts"],
          fileParallelism: false,
          testTimeout: 300_000,
          hookTimeout: 600_000,
        },
      },
      // docker-compose.yml run for real under podman, with images built here (npm run test:containers).
      {
        test: {
          name: "containers",
          include: ["docker/test/*.containers.test.ts"],
          globalSetup: ["docker/test/podman-setup.ts"],
          testTimeout: 300_000,
          hookTimeout: 1_200_000,
        },
      },
    ],
  },
});

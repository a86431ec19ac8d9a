import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { defineConfig } from "vitest/config";
import { fastTiers } from "./vitest.config.ts";

/**
 * Mutation testing runs the fast tiers only, so every mutant is judged in seconds without Kafka. Stryker
 * runs them in a copy of the repository whose node_modules links back to the original workspaces: each
 * `@flashgate/...` import is pointed at the copy here, so a package's mutants meet the tests of every
 * package that uses it.
 */
const root = import.meta.dirname;

const workspaceExports = ["apps", "packages"].flatMap((group) =>
  readdirSync(join(root, group)).flatMap((dir) => {
    const manifest = JSON.parse(readFileSync(join(root, group, dir, "package.json"), "utf8"));
    return Object.entries<string>(manifest.exports ?? {}).map(([subpath, file]) => ({
      find: new RegExp(`^${join(manifest.name, subpath)}$`),
      replacement: join(root, group, dir, file),
    }));
  }),
);

// Projects do not inherit the root's aliases: each gets them.
export default defineConfig({
  test: { projects: fastTiers.map((project) => ({ ...project, resolve: { alias: workspaceExports } })) },
});

// npm run turbo:inputs — writes each workspace's turbo.json: what its typecheck and fast tests read.
//
// A workspace's tests import the test kit, which imports the product, so the workspace graph has cycles
// (db → testkit → db) and turbo's `^` dependencies cannot follow it. Each workspace names instead the
// folders of every workspace it reaches through its dependencies and devDependencies, which knip keeps
// equal to its imports: a change to one invalidates exactly the workspaces that can see it.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;

interface Workspace {
  name: string;
  dir: string;
  scripts: Record<string, string>;
  uses: string[];
}

export function workspaces(): Workspace[] {
  return ["apps", "packages"].flatMap((group) =>
    readdirSync(join(root, group)).map((folder) => {
      const dir = `${group}/${folder}`;
      const manifest = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"));
      const uses = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter((name) =>
        name.startsWith("@flashgate/"),
      );
      return { name: manifest.name, dir, scripts: manifest.scripts ?? {}, uses };
    }),
  );
}

/** The workspaces `start` reaches, itself excepted, in a stable order. */
function reached(all: Map<string, Workspace>, start: Workspace): Workspace[] {
  const seen = new Set<string>([start.name]);
  const queue = [...start.uses];
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
    if (seen.has(name)) continue;
    seen.add(name);
    queue.push(...(all.get(name)?.uses ?? []));
  }
  seen.delete(start.name);
  return [...seen].flatMap((name) => all.get(name) ?? []).sort((a, b) => a.dir.localeCompare(b.dir));
}

/** Each workspace's turbo.json, as the file's text, for the tasks it has. */
export function turboConfigs(): Map<string, string> {
  const all = new Map(workspaces().map((workspace) => [workspace.name, workspace]));
  const configs = new Map<string, string>();
  for (const workspace of all.values()) {
    const inputs = [
      "$TURBO_DEFAULT$",
      ...reached(all, workspace).map((other) => `$TURBO_ROOT$/${other.dir}/**`),
      // turbo's own logs, which every run rewrites.
      "!$TURBO_ROOT$/*/*/.turbo/**",
    ];
    const tasks = Object.fromEntries(
      ["typecheck", "test:fast"]
        .filter((task) => task in workspace.scripts)
        .map((task) => [task, { inputs }]),
    );
    configs.set(
      join(workspace.dir, "turbo.json"),
      `${JSON.stringify({ $schema: "../../node_modules/turbo/schema.json", extends: ["//"], tasks }, null, 2)}\n`,
    );
  }
  return configs;
}

if (import.meta.main) {
  for (const [file, text] of turboConfigs()) writeFileSync(join(root, file), text);
  console.log("wrote each workspace's turbo.json");
}

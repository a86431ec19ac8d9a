import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./paths.ts";

const read = (file: string) => readFileSync(join(repoRoot, file), "utf8");

/** Every image a file names by default: compose's `${VAR:-image}` and a Dockerfile's `ARG X_IMAGE=image`. */
const defaults = (text: string) => [
  ...[...text.matchAll(/image: \$\{[A-Z_]+:-([^}]+)\}/g)].map((match) => match[1]),
  ...[...text.matchAll(/^ARG [A-Z_]+_IMAGE=(\S+)$/gm)].map((match) => match[1]),
];

describe("the images the containers run and build on", () => {
  it("are pinned to exact versions, but for flashgate's own (built from this checkout)", () => {
    const named = ["docker-compose.yml", "Dockerfile", "docker/kafka/Dockerfile"].flatMap((file) =>
      defaults(read(file)),
    );
    const others = named.filter((image) => !image.startsWith("flashgate-"));
    expect(others.length).toBe(6);
    for (const image of others) expect(image).toMatch(/^[a-z0-9./-]+:[^:]*\d+\.\d+\.\d+[^:]*$|@sha256:/);
  });
});

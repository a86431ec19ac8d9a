import { spawnSync } from "node:child_process";
import type { DatabaseEngine } from "./config.ts";
import { StackError } from "./wait.ts";

interface Prerequisite {
  command: string;
  /** Only this engine needs it; the others need it whatever the engine. */
  engine?: DatabaseEngine;
  /** Only a replicated database needs it (its endpoint). */
  proxy?: boolean;
  versionArgs: string[];
  install: string;
  check?: (output: string) => string | undefined;
}

const javaAtLeast17 = (output: string) => {
  const match = /version "(\d+)/.exec(output);
  const major = match ? Number(match[1]) : 0;
  return major >= 17 ? undefined : `java ${match?.[1] ?? "?"} found, 17 or newer is needed`;
};

const prerequisites: Prerequisite[] = [
  {
    command: "java",
    versionArgs: ["-version"],
    install: "apt-get install -y openjdk-17-jre-headless",
    check: javaAtLeast17,
  },
  { command: "mvn", versionArgs: ["-v"], install: "apt-get install -y maven" },
  // Locks the shared jars dir while one process writes it.
  { command: "flock", versionArgs: ["--version"], install: "apt-get install -y util-linux" },
  // MySQL's server is unpacked from a jar; MariaDB's comes from the system.
  { command: "unzip", versionArgs: ["-v"], install: "apt-get install -y unzip", engine: "mysql" },
  {
    command: "mariadbd",
    versionArgs: ["--version"],
    install: "apt-get install -y mariadb-server",
    engine: "mariadb",
  },
  {
    command: "mariadb-install-db",
    versionArgs: ["--help"],
    install: "apt-get install -y mariadb-server",
    engine: "mariadb",
  },
  { command: "redis-server", versionArgs: ["--version"], install: "apt-get install -y redis-server" },
  { command: "haproxy", versionArgs: ["-v"], install: "apt-get install -y haproxy", proxy: true },
];

/** Stops with one line naming the first missing tool and how to install it. */
export function checkPrerequisites(engine: DatabaseEngine, needs: { proxy?: boolean } = {}): void {
  const path = sbinPath();
  const needed = prerequisites.filter((p) => (p.engine ?? engine) === engine && (!p.proxy || needs.proxy));
  for (const prerequisite of needed) {
    const result = spawnSync(prerequisite.command, prerequisite.versionArgs, {
      encoding: "utf8",
      env: { ...process.env, PATH: path },
    });
    if (result.error) {
      throw new StackError(
        `missing prerequisite: ${prerequisite.command} — install it with: ${prerequisite.install}`,
      );
    }
    const problem = prerequisite.check?.(`${result.stdout}${result.stderr}`);
    if (problem)
      throw new StackError(
        `prerequisite ${prerequisite.command}: ${problem} — install it with: ${prerequisite.install}`,
      );
  }
}

/** mariadbd lives in /usr/sbin, which a non-root PATH may lack. */
export const sbinPath = () => `${process.env.PATH ?? ""}:/usr/sbin:/usr/local/sbin`;

import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function readPid(pidsDir: string, name: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(join(pidsDir, `${name}.pid`), "utf8"), 10);
    return Number.isFinite(pid) && isAlive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

export interface DaemonSpec {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
}

/** Starts a process in its own group, logging to logs/<name>.log, and records its pid so `down` finds it later. */
export function startDaemon(
  spec: DaemonSpec,
  dirs: { logs: string; pids: string },
): { pid: number; logFile: string; exited: () => number | null } {
  mkdirSync(dirs.logs, { recursive: true });
  mkdirSync(dirs.pids, { recursive: true });
  const logFile = join(dirs.logs, `${spec.name}.log`);
  const fd = openSync(logFile, "a");
  const child = spawn(spec.command, spec.args, {
    cwd: spec.cwd,
    env: { ...process.env, ...spec.env },
    detached: true,
    stdio: ["ignore", fd, fd],
  });
  closeSync(fd);
  if (child.pid === undefined) throw new Error(`could not start ${spec.name} (${spec.command})`);
  let exitCode: number | null = null;
  child.once("exit", (code, signal) => {
    exitCode = code ?? (signal ? 128 : 1);
  });
  child.unref();
  writeFileSync(join(dirs.pids, `${spec.name}.pid`), String(child.pid));
  return { pid: child.pid, logFile, exited: () => exitCode };
}

/** SIGTERM to the whole process group, then SIGKILL after the grace period. */
export async function stopDaemon(pidsDir: string, name: string, graceMs = 15000): Promise<boolean> {
  const pid = readPid(pidsDir, name);
  rmSync(join(pidsDir, `${name}.pid`), { force: true });
  if (pid === undefined) return false;
  signalGroup(pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < deadline) await sleep(100);
  if (isAlive(pid)) {
    signalGroup(pid, "SIGKILL");
    while (isAlive(pid)) await sleep(50);
  }
  return true;
}

function signalGroup(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

export function tailLog(logFile: string, lines = 15): string {
  try {
    return readFileSync(logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

import { chmodSync, writeFileSync } from "node:fs";

/** Writes a file only its owner may read: `mode` applies only when a file is created, so it is set again. */
export function writePrivateFile(file: string, text: string): void {
  writeFileSync(file, text, { mode: 0o600 });
  chmodSync(file, 0o600);
}

// Runs before `npm start` and `npm test` on whatever Node the machine has (plain JavaScript, no
// dependencies): installs the npm packages when they are missing or older than package-lock.json, so
// a fresh clone needs no separate install step. Node 24 itself comes with them (the `node` package).
import { execSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";

const installed = "node_modules/.package-lock.json";
const stale = !existsSync(installed) || statSync(installed).mtimeMs < statSync("package-lock.json").mtimeMs;
if (stale) {
  console.error("flashgate: installing the npm packages (npm ci)…");
  execSync("npm ci --no-audit --no-fund", { stdio: "inherit" });
}

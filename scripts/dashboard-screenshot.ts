// npm run screenshot — with the stack running (`npm start`), runs `flashgate demo` and photographs the
// dashboard in the middle of it into docs/dashboard.png (the README's picture).
import { spawn } from "node:child_process";
import { join } from "node:path";
import { repoRoot, stackContext } from "@flashgate/stack";
import { chromium } from "playwright-core";

const { config, secrets } = stackContext();
const dashboardUrl = `http://127.0.0.1:${config.FLASHGATE_DASHBOARD_PORT}`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu"],
});
try {
  const page = await browser.newPage({
    viewport: { width: 1400, height: 900 },
    httpCredentials: { username: "operator", password: secrets.dashboardPassword },
  });
  await page.goto(dashboardUrl);
  const demo = spawn(
    process.execPath,
    [join(repoRoot, "apps", "cli", "bin", "flashgate.js"), "demo", "--buyers", "8000", "--concurrency", "40"],
    { stdio: ["ignore", "inherit", "pipe"] },
  );
  const exited = new Promise((resolve) => demo.once("exit", resolve));
  let progress = "";
  demo.stderr.on("data", (chunk) => {
    progress += chunk;
    process.stderr.write(chunk);
  });
  // Mid-sale: once the raw-SQL restock and the closure have happened, and a few samples later.
  while (!progress.includes("mid-sale")) await new Promise((resolve) => setTimeout(resolve, 200));
  await page.locator("#skus tbody tr").first().waitFor();
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const file = join(repoRoot, "docs", "dashboard.png");
  await page.screenshot({ path: file, fullPage: true });
  process.stderr.write(`\nwrote ${file}\n`);
  await exited;
} finally {
  await browser.close();
}

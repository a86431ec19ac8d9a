// Runs before `npm start`, `npm test` and `npm run bench` on whatever Node the machine has (plain JavaScript, no
// dependencies), so a fresh clone needs no separate install step:
// 1. the Debian packages the command needs: installed with apt when run as root, otherwise it stops
//    here with the one `apt-get install` line that is missing;
// 2. the npm packages, when missing or older than package-lock.json (quietly: npm runs on the
//    machine's Node, and its engine warnings about the Node 24 the project brings are noise).
import { execFileSync, execSync, spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";

const path = `${process.env.PATH ?? ""}:/usr/sbin:/usr/local/sbin`;
const has = (command) =>
  spawnSync("sh", ["-c", `command -v ${command}`], { env: { ...process.env, PATH: path } }).status === 0;
// Listed once; where ldconfig cannot list them, the MySQL server's own start names what is missing.
const libraries = spawnSync("sh", ["-c", "ldconfig -p"], {
  encoding: "utf8",
  env: { ...process.env, PATH: path },
});
const hasLibrary = (name) => libraries.status !== 0 || libraries.stdout.includes(`${name} `);

const serverParts = [
  ["java", "openjdk-17-jre-headless", () => has("java")],
  ["mvn", "maven", () => has("mvn")],
  ["unzip", "unzip", () => has("unzip")],
  ["redis-server", "redis-server", () => has("redis-server")],
  // The MySQL 8 server the stack unpacks from Maven Central links these two.
  ["libaio.so.1", "libaio1", () => hasLibrary("libaio.so.1")],
  ["libnuma.so.1", "libnuma1", () => hasLibrary("libnuma.so.1")],
  // The database endpoint of the cluster topology (a primary and a replica behind it).
  ["haproxy", "haproxy", () => has("haproxy")],
];
const event = process.env.npm_lifecycle_event ?? "";
// The bench runs the decision and a storm on MariaDB beside MySQL in every run.
if (process.env.FLASHGATE_DB === "mariadb" || event === "prebench")
  serverParts.push(["mariadbd", "mariadb-server", () => has("mariadbd")]);
const testParts = [
  // The dashboard's browser test, and promtool (alerting rules) with a real Prometheus scraping the stack.
  ["chromium", "chromium", () => has("chromium")],
  ["promtool", "prometheus", () => has("promtool")],
  // The certificates of the test's Kafka broker that authenticates as Kubernetes' does (TLS, SCRAM).
  ["openssl", "openssl", () => has("openssl")],
  // deploy/kubernetes rendered for its offline validation.
  ["kubectl", "kubectl", () => has("kubectl")],
];
const wanted =
  event.startsWith("pretest") || event === "premutation" ? [...serverParts, ...testParts] : serverParts;
const missing = [...new Set(wanted.filter(([, , present]) => !present()).map(([, pkg]) => pkg))];

if (missing.length) {
  const line = `apt-get install -y --no-install-recommends ${missing.join(" ")}`;
  if (process.getuid?.() !== 0 || !has("apt-get")) {
    console.error(`flashgate: missing Debian packages; install them first with:\n  sudo ${line}`);
    process.exit(1);
  }
  console.error(`flashgate: installing the Debian packages this needs: ${missing.join(" ")} (apt-get)…`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive", PATH: path };
  try {
    execFileSync("apt-get", ["update", "-qq"], { stdio: ["ignore", "ignore", "inherit"], env });
    execFileSync("sh", ["-c", `${line} -qq`], { stdio: ["ignore", "ignore", "inherit"], env });
  } catch {
    console.error(`flashgate: apt-get failed; run by hand:\n  ${line}`);
    process.exit(1);
  }
}

const installed = "node_modules/.package-lock.json";
const stale = !existsSync(installed) || statSync(installed).mtimeMs < statSync("package-lock.json").mtimeMs;
if (stale) {
  console.error("flashgate: installing the npm packages (npm ci)…");
  try {
    execSync("npm ci --no-audit --no-fund --loglevel=error --foreground-scripts=false", {
      stdio: ["ignore", "ignore", "pipe"],
      encoding: "utf8",
    });
  } catch (error) {
    console.error(error.stderr || error.message);
    process.exit(1);
  }
  console.error("flashgate: npm packages installed");
}

// The Kubernetes API's own models (the official Java client, from Maven Central) judging each rendered
// object strictly: a field its kind does not define is refused, as an API server with strict field
// validation refuses it. The classpath is resolved once per machine into the jars folder.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const dir = join(root, "deploy/kubernetes/schemas/kubernetes");

/** One answer per object, in order: "ok", or why the API's model refuses it. */
export function strictKubernetes(objects: object[]): string[] {
  const jars = join(process.env.FLASHGATE_JARS ?? join(root, ".flashgate/jars"), "kubernetes-models");
  const classpath = join(jars, "classpath.txt");
  if (!existsSync(classpath)) {
    mkdirSync(jars, { recursive: true });
    execFileSync(
      "mvn",
      ["-q", "-f", join(dir, "pom.xml"), "dependency:build-classpath", `-Dmdep.outputFile=${classpath}`],
      { stdio: "inherit" },
    );
  }
  const output = execFileSync(
    "java",
    ["-cp", readFileSync(classpath, "utf8").trim(), join(dir, "Strict.java")],
    { input: objects.map((object) => JSON.stringify(object)).join("\n"), encoding: "utf8" },
  );
  // The model's message ends with the whole object; its first sentence says what is wrong.
  return output
    .trim()
    .split("\n")
    .map((line) => line.replace(/ JSON: .*$/, ""));
}

import { readFileSync } from "node:fs";

const opsDir = new URL("../", import.meta.url);

export const rulesFile = new URL("prometheus/flashgate.rules.yml", opsDir);
export const dashboardFile = new URL("grafana/flashgate.json", opsDir);

/** Every PromQL expression of the rules file and the Grafana dashboard (one `expr:` per line in the rules). */
export function expressions(): { rules: string[]; dashboard: string[]; recorded: Set<string> } {
  const rules = readFileSync(rulesFile, "utf8");
  const dashboard = JSON.parse(readFileSync(dashboardFile, "utf8")) as {
    panels: { targets: { expr: string }[] }[];
  };
  return {
    rules: [...rules.matchAll(/^\s*expr:\s*(.+)$/gm)].map((match) => match[1]),
    dashboard: dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr)),
    recorded: new Set([...rules.matchAll(/^\s*- record:\s*(\S+)$/gm)].map((match) => match[1])),
  };
}

/** The series an expression reads: names outside strings, label matchers and range selectors. */
export function seriesNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, "")
    .replace(/\{[^}]*\}/g, "")
    .replace(/\[[^\]]*\]/g, "")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, "");
  return [...bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)]
    .map((match) => match[0])
    .filter((name) => name === "up" || name.startsWith("flashgate_") || name.startsWith("flashgate:"));
}

/** Series names a Prometheus text exposition declares (# TYPE), histograms with their _bucket, _sum and _count. */
export function exportedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name);
    if (type === "histogram" || type === "summary")
      for (const suffix of ["_bucket", "_sum", "_count"]) names.add(name + suffix);
  }
  return names;
}

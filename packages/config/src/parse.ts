import type { z } from "zod";

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Parses an env object once at start; a bad value names its variable so the operator can fix it. */
export function parseConfig<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined>,
): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const variable = issue.path.join(".") || "(environment)";
    return `${variable}: ${issue.message}`;
  });
  throw new ConfigError(`invalid configuration: ${lines.join("; ")}`);
}

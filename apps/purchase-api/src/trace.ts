import { randomUUID } from "node:crypto";

const traceIdPattern = /^[A-Za-z0-9-]{8,64}$/;

/** The caller's X-Request-Id when it is a sane id, else a new one: every log line and problem carries it. */
export const traceIdOf = (given: string | string[] | undefined): string =>
  typeof given === "string" && traceIdPattern.test(given) ? given : randomUUID();

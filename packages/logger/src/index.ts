import pino, { type Logger } from "pino";

export type { Logger };

/** Structured JSON logs; secrets are redacted by path wherever they might appear. */
export function createLogger(service: string, level = "info"): Logger {
  return pino({
    name: service,
    level,
    base: { service },
    redact: {
      paths: [
        "password",
        "*.password",
        "secret",
        "*.secret",
        "authorization",
        "*.authorization",
        "headers.authorization",
        "token",
      ],
      censor: "[redacted]",
    },
  });
}

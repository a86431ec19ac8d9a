import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { StackContext } from "../context.ts";
import { writePrivateFile } from "../private-file.ts";

export const classpath = (ctx: StackContext) => `${ctx.paths.kafkaJars}/*`;

/** Kafka 4 logs through log4j2; without a config it prints nothing useful. WARN keeps the log files small. */
export function writeLog4j(ctx: StackContext, name: string, infoLoggers: string[] = []): string {
  const file = join(ctx.paths.config, `${name}-log4j2.properties`);
  const loggers = infoLoggers.flatMap((logger, index) => [
    `logger.l${index}.name = ${logger}`,
    `logger.l${index}.level = INFO`,
  ]);
  writeFileSync(
    file,
    [
      "status = warn",
      "appender.out.type = Console",
      "appender.out.name = out",
      "appender.out.layout.type = PatternLayout",
      "appender.out.layout.pattern = [%d] %p %m (%c)%n",
      "rootLogger.level = WARN",
      "rootLogger.appenderRef.out.ref = out",
      ...loggers,
    ].join("\n"),
  );
  return file;
}

/** A broker's collector is Kafka's own choice (G1, 20 ms pauses); Connect's is workerGarbageCollector's. */
export const jvmArgs = (heap: string, log4j: string, gc = ["-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20"]) => [
  `-Xms${heap}`,
  `-Xmx${heap}`,
  ...gc,
  "-Djava.awt.headless=true",
  `-Dlog4j2.configurationFile=${log4j}`,
];

export const writeProperties = (file: string, properties: Record<string, string | number>) =>
  writePrivateFile(
    file,
    `${Object.entries(properties)
      .map(([key, value]) => `${key}=${value}`)
      .join("\n")}\n`,
  );

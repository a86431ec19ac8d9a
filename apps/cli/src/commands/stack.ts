import type { Command } from "commander";
import { localStack } from "../local-stack.ts";

export function registerStackCommands(program: Command) {
  program
    .command("up")
    .description(
      "start MySQL 8 (or MariaDB: FLASHGATE_DB), Redis, Kafka, Kafka Connect + Debezium, the connector and the apps",
    )
    .option("--detach", "return once everything runs, leaving it in the background")
    .option("--no-apps", "start the infrastructure only")
    .option(
      "--topology <topology>",
      "single (default), or cluster: Redis Cluster 3+3, 3 Kafka brokers, 2 Connect workers, 2 APIs, 2 maintainers (FLASHGATE_TOPOLOGY)",
    )
    .action(async (options: { detach?: boolean; apps: boolean; topology?: string }) => {
      const { down, endpoints, stackContext, status, up } = await localStack();
      const ctx = stackContext({
        env: { ...process.env, ...(options.topology ? { FLASHGATE_TOPOLOGY: options.topology } : {}) },
      });
      const startedAt = Date.now();
      let started: string[] = [];
      let stopping = false;
      const stop = async () => {
        if (stopping) return;
        stopping = true;
        ctx.progress.info("\nstopping what this run started…");
        await down(ctx, { only: started });
        process.exit(0);
      };
      if (!options.detach) {
        process.on("SIGINT", stop);
        process.on("SIGTERM", stop);
      }
      try {
        started = await up(ctx, { withApps: options.apps });
      } catch (error) {
        if (!options.detach && started.length) await down(ctx, { only: started });
        throw error;
      }
      ctx.progress.info(`\nflashgate is up in ${((Date.now() - startedAt) / 1000).toFixed(1)}s`);
      for (const [name, url] of Object.entries(endpoints(ctx)))
        ctx.progress.info(`  ${name.padEnd(17)} ${url}`);
      if (options.apps)
        ctx.progress.info(
          `  the dashboard asks for user operator and the password "dashboardPassword" in ${ctx.paths.secrets}`,
        );
      if (options.detach) return;
      ctx.progress.info("\nCtrl-C stops everything this run started.");
      // Stay in the foreground (a pending promise alone would let Node exit) and say when something dies.
      const reported = new Set<string>();
      setInterval(async () => {
        for (const component of await status(ctx)) {
          if (started.includes(component.name) && !component.running && !reported.has(component.name)) {
            reported.add(component.name);
            ctx.progress.info(`! ${component.name} stopped — see ${ctx.paths.logs}/${component.name}.log`);
          }
        }
      }, 5000);
    });

  program
    .command("down")
    .description("stop what `up` started (gracefully, then forcibly)")
    .option("--purge", "also delete local state (databases, Kafka logs, secrets)")
    .action(async (options: { purge?: boolean }) => {
      const { down, stackContext } = await localStack();
      await down(stackContext(), { purge: options.purge });
    });

  program
    .command("status")
    .description("what runs, on which port, healthy or not")
    .option("--json", "machine-readable output")
    .action(async (options: { json?: boolean }) => {
      const { stackContext, status } = await localStack();
      const components = await status(stackContext());
      if (options.json) {
        process.stdout.write(
          `${JSON.stringify({ healthy: components.every((c) => c.healthy), components }, null, 2)}\n`,
        );
      } else {
        for (const c of components) {
          const state = c.healthy ? "healthy" : c.running ? "UNHEALTHY" : "stopped";
          process.stdout.write(
            `${c.name.padEnd(17)} ${String(c.port).padEnd(6)} ${state}${c.pid ? ` (pid ${c.pid})` : ""}${c.role ? ` — ${c.role}` : ""}\n`,
          );
        }
      }
      if (!components.every((c) => c.healthy)) process.exitCode = 1;
    });
}

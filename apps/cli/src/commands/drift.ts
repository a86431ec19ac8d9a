import { parseId } from "@flashgate/auth";
import { redisClient, withScripts } from "@flashgate/cache";
import { createPool } from "@flashgate/db";
import { reconcile } from "@flashgate/sync";
import { type Command, InvalidArgumentError } from "commander";
import { localStack } from "../local-stack.ts";

const positive = (value: string) => {
  const id = parseId(value);
  if (id === undefined) throw new InvalidArgumentError("a positive integer");
  return id;
};

export function registerDriftCommands(program: Command) {
  const drift = program.command("drift").description("compare the Redis cache with MySQL");
  drift
    .command("check")
    .description("check every live SKU; exits 1 while drift remains")
    .option("--activity <id>", "only this activity", positive)
    .option("--repair", "rebuild drifted SKUs from MySQL (position-fenced)")
    .option("--json", "machine-readable output")
    .action(async (options: { activity?: number; repair?: boolean; json?: boolean }) => {
      const env = await storesOf(process.env);
      const pool = createPool(env.DATABASE_URL, { connectionLimit: 2 });
      const redis = withScripts(redisClient(env.REDIS_URL, { maxRetriesPerRequest: 1 }));
      try {
        const check = await reconcile(pool, redis, { activityId: options.activity, repair: options.repair });
        const remaining = check.drifted.length - check.repaired;
        if (options.json) {
          process.stdout.write(`${JSON.stringify({ ...check, remaining }, null, 2)}\n`);
        } else {
          const counts = new Map<string, number>();
          for (const sku of check.skus) counts.set(sku.verdict, (counts.get(sku.verdict) ?? 0) + 1);
          process.stdout.write(
            `${check.skus.length} SKUs: ${[...counts].map(([verdict, n]) => `${n} ${verdict}`).join(", ") || "none"}\n`,
          );
          for (const sku of check.drifted) {
            process.stdout.write(
              `  drift ${sku.activityId}/${sku.skuId}: database available ${sku.database?.available} buyers ${sku.database?.buyers}, cache available ${sku.cache?.available} buyers ${sku.cache?.buyers}\n`,
            );
          }
          if (options.repair) process.stdout.write(`repaired ${check.repaired}\n`);
        }
        if (remaining > 0) process.exitCode = 1;
      } finally {
        await pool.end();
        redis.disconnect();
      }
    });
}

/** DATABASE_URL and REDIS_URL as given; the local stack's, for either that is not. */
async function storesOf(env: NodeJS.ProcessEnv): Promise<{ DATABASE_URL: string; REDIS_URL: string }> {
  const { DATABASE_URL, REDIS_URL } = env;
  if (DATABASE_URL && REDIS_URL) return { DATABASE_URL, REDIS_URL };
  const { appEnv, stackContext } = await localStack();
  const local = appEnv(stackContext());
  return { DATABASE_URL: DATABASE_URL || local.DATABASE_URL, REDIS_URL: REDIS_URL || local.REDIS_URL };
}

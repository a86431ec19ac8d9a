import { adminConnection } from "@flashgate/stack";
import { expect } from "vitest";
import { fastTierContext } from "./env.ts";
import { eventually } from "./eventually.ts";

/**
 * Resolves once `transactions` transactions of the fast tier's database wait for a row lock — ones
 * running a statement that contains `statementContaining`, when given: InnoDB refreshes information_schema's view
 * of transactions at most every 100 ms, so a wait that ended just before can still be listed. Lock
 * waits are visible to an account with PROCESS only: the administrator's.
 */
export async function untilLockWait(statementContaining = "", transactions = 1): Promise<void> {
  await untilAdminCount(
    "SELECT COUNT(*) AS n FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT' AND LOCATE(?, trx_query) > 0",
    [statementContaining],
    (n) => expect(n).toBeGreaterThanOrEqual(transactions),
  );
}

/** Resolves once no statement of `user`'s runs on the fast tier's database: what still runs may yet commit. */
export async function untilIdle(user: string): Promise<void> {
  await untilAdminCount(
    "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE USER = ? AND COMMAND <> 'Sleep'",
    [user],
    (n) => expect(n).toBe(0),
  );
}

/** Polls a count the administrator reads until `assert` passes on it. */
async function untilAdminCount(sql: string, params: unknown[], assert: (n: number) => void): Promise<void> {
  const admin = await adminConnection(fastTierContext());
  try {
    await eventually(async () => {
      const [rows] = await admin.query(sql, params);
      assert(Number((rows as { n: number }[])[0].n));
    });
  } finally {
    await admin.end();
  }
}

/**
 * Server error numbers flashgate acts on. MySQL 8 and MariaDB share them but one, so each is defined once here;
 * the engine suite (packages/db/test/engine.int.test.ts) provokes every one on both engines.
 */
export const serverErrors = {
  /** A CHECK constraint refused a row: ER_CHECK_CONSTRAINT_VIOLATED on MySQL (ER_CONSTRAINT_FAILED on MariaDB, below). */
  checkViolated: 3819,
  checkViolatedMariadb: 4025,
  /** ER_NONEXISTING_GRANT: revoking what was never granted. */
  noSuchGrant: 1141,
  /** ER_NONEXISTING_TABLE_GRANT: revoking a table privilege that was never granted. */
  noSuchTableGrant: 1147,
  /** ER_TABLEACCESS_DENIED_ERROR: the user may not do this to this table. */
  tableAccessDenied: 1142,
  /** ER_SPECIFIC_ACCESS_DENIED_ERROR: the statement needs a privilege the user lacks (RELOAD, SUPER…). */
  specificAccessDenied: 1227,
  duplicateKey: 1062,
  /** ER_BAD_NULL_ERROR: NULL for a NOT NULL column (strict mode, which flashgate's sessions pin). */
  badNull: 1048,
  parse: 1064,
  lockWaitTimeout: 1205,
  deadlock: 1213,
  /** --read-only / --super-read-only: a primary demoted during a failover, or a replica. */
  readOnly: 1290,
} as const;

export const errnoOf = (error: unknown): number | undefined => (error as { errno?: number }).errno;

export const isDuplicateKey = (error: unknown) => errnoOf(error) === serverErrors.duplicateKey;

/** A row broke a CHECK constraint or a NOT NULL column: the statement changed nothing. */
export const isRowRefused = (error: unknown) =>
  new Set<number>([serverErrors.checkViolated, serverErrors.checkViolatedMariadb, serverErrors.badNull]).has(
    errnoOf(error) ?? 0,
  );

/** The statement lost a lock conflict (deadlock, lock wait timeout) and its transaction was rolled back. */
export const isLockConflict = (error: unknown) =>
  errnoOf(error) === serverErrors.deadlock || errnoOf(error) === serverErrors.lockWaitTimeout;

/** Runs an INSERT: true if it inserted, false if the key already existed; any other failure is thrown. */
export const inserted = (insert: Promise<unknown>): Promise<boolean> =>
  insert.then(
    () => true,
    (error: unknown) => {
      if (!isDuplicateKey(error)) throw error;
      return false;
    },
  );

const connectionLossCodes = new Set([
  "PROTOCOL_CONNECTION_LOST",
  "PROTOCOL_SEQUENCE_TIMEOUT",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
]);

/** The connection broke (or timed out) mid-conversation: whatever was sent may or may not have run. */
export const isConnectionLoss = (error: unknown) =>
  connectionLossCodes.has((error as { code?: string }).code ?? "");

/** The server refused the statement as a whole: it rolled back, and a later attempt may succeed. */
const refusedForNow = new Set<number>([
  serverErrors.lockWaitTimeout,
  serverErrors.deadlock,
  serverErrors.readOnly,
]);

/**
 * The database cannot take this now — unreachable, lost, read-only, or the statement lost a lock
 * conflict: a 503 with Retry-After, never a 500.
 */
export const isDatabaseUnavailable = (error: unknown) =>
  isConnectionLoss(error) ||
  (error as { code?: string }).code === "ECONNREFUSED" ||
  refusedForNow.has(errnoOf(error) ?? 0);

import { z } from "zod";

/** A binlog coordinate as a fixed-width string, so Lua (and humans) can compare positions with `<`. */
export type BinlogPosition = string;

export function binlogPosition(file: string, pos: number, row = 0): BinlogPosition {
  const match = /\.(\d+)$/.exec(file);
  if (!match) throw new Error(`not a binlog file name: ${file}`);
  return `${match[1].padStart(8, "0")}:${String(pos).padStart(13, "0")}:${String(row).padStart(6, "0")}`;
}

const sourceSchema = z.object({
  table: z.string(),
  file: z.string(),
  pos: z.number().int().nonnegative(),
  row: z.number().int().nonnegative().default(0),
  ts_ms: z.number(),
  snapshot: z.union([z.string(), z.boolean()]).nullish(),
  gtid: z.string().nullish(),
});

const envelopeSchema = z.object({
  before: z.record(z.string(), z.unknown()).nullable(),
  after: z.record(z.string(), z.unknown()).nullable(),
  source: sourceSchema,
  op: z.enum(["r", "c", "u", "d", "t", "m"]),
  ts_ms: z.number().optional(),
});

export type ChangeOp = "r" | "c" | "u" | "d";

export interface ChangeEvent {
  table: string;
  op: ChangeOp;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  position: BinlogPosition;
  /** When Debezium emitted the event (ms). */
  emittedAtMs: number | undefined;
  /** When its transaction committed (ms; the binlog's event time). */
  committedAtMs?: number;
  /** Its transaction's GTID on MySQL (`server uuid:number`); none on MariaDB and in snapshots. */
  gtid?: string;
}

export class EnvelopeError extends Error {
  override name = "EnvelopeError";
}

/** Parses a Debezium JSON value (schemas disabled). A null value is a tombstone and yields undefined. */
export function parseChange(value: string | null | undefined): ChangeEvent | undefined {
  if (value === null || value === undefined || value === "") return undefined;
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    throw new EnvelopeError("value is not JSON");
  }
  const parsed = envelopeSchema.safeParse(json);
  if (!parsed.success)
    throw new EnvelopeError(
      `not a Debezium change: ${parsed.error.issues[0]?.path.join(".")} ${parsed.error.issues[0]?.message}`,
    );
  const { op, before, after, source, ts_ms } = parsed.data;
  if (op === "t" || op === "m") throw new EnvelopeError(`unsupported op ${op}`);
  if (op !== "d" && after === null) throw new EnvelopeError(`op ${op} without after`);
  if (op === "d" && before === null) throw new EnvelopeError("delete without before");
  return {
    table: source.table,
    op,
    before,
    after,
    position: binlogPosition(source.file, source.pos, source.row),
    emittedAtMs: ts_ms,
    committedAtMs: source.ts_ms,
    ...(source.gtid ? { gtid: source.gtid } : {}),
  };
}

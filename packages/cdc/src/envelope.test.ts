import { describe, expect, it } from "vitest";
import { binlogPosition, EnvelopeError, parseChange } from "./envelope.ts";

const envelope = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify({
    before: null,
    after: { activity_id: 1, sku_id: 2, available: 9 },
    source: { table: "sale_stock", file: "binlog.000003", pos: 10054, row: 1, ts_ms: 1 },
    op: "c",
    ts_ms: 5,
    ...overrides,
  });

describe("binlogPosition", () => {
  it("orders positions across files, offsets and rows as strings", () => {
    const a = binlogPosition("binlog.000002", 999_999, 5);
    const b = binlogPosition("binlog.000003", 4, 0);
    const c = binlogPosition("binlog.000003", 4, 1);
    const d = binlogPosition("binlog.000003", 120, 0);
    expect([d, c, b, a].sort()).toEqual([a, b, c, d]);
  });

  it("refuses a name without an index", () => {
    expect(() => binlogPosition("binlog", 4)).toThrow(/binlog file/);
  });
});

describe("parseChange", () => {
  it("parses a create", () => {
    const change = parseChange(envelope());
    expect(change).toMatchObject({
      table: "sale_stock",
      op: "c",
      after: { available: 9 },
      position: "00000003:0000000010054:000001",
    });
  });

  it("treats a null value as a tombstone", () => {
    expect(parseChange(null)).toBeUndefined();
  });

  it("rejects non-JSON, foreign JSON and a delete without before", () => {
    expect(() => parseChange("{oops")).toThrow(EnvelopeError);
    expect(() => parseChange(JSON.stringify({ hello: 1 }))).toThrow(EnvelopeError);
    expect(() => parseChange(envelope({ op: "d", before: null, after: null }))).toThrow(
      /delete without before/,
    );
  });
});

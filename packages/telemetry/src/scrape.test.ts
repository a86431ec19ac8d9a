import { describe, expect, it } from "vitest";
import { histogramBuckets, parsePrometheus, quantileBetween, sumOf } from "./scrape.ts";

const scrape = (counts: [string, number][]) =>
  parsePrometheus(
    [
      "# HELP lag x",
      ...counts.map(([le, n]) => `lag_bucket{le="${le}",source="row"} ${n}`),
      'admissions_total{outcome="SOLD_OUT"} 7',
      'admissions_total{outcome="CREATED"} 3',
    ].join("\n"),
  );

describe("prometheus text", () => {
  it("parses samples with labels and sums a counter by filter", () => {
    const samples = scrape([["0.1", 1]]);
    expect(sumOf(samples, "admissions_total")).toBe(10);
    expect(sumOf(samples, "admissions_total", { outcome: "CREATED" })).toBe(3);
  });

  it("computes a quantile over the observations between two scrapes", () => {
    const before = histogramBuckets(
      scrape([
        ["0.01", 0],
        ["0.1", 0],
        ["1", 0],
        ["+Inf", 0],
      ]),
      "lag",
    );
    const after = histogramBuckets(
      scrape([
        ["0.01", 50],
        ["0.1", 90],
        ["1", 100],
        ["+Inf", 100],
      ]),
      "lag",
    );
    expect(quantileBetween(before, after, 0.5)).toBeCloseTo(0.01);
    expect(quantileBetween(before, after, 0.9)).toBeCloseTo(0.1);
    expect(quantileBetween(before, after, 0.99)).toBeCloseTo(0.91);
    expect(quantileBetween(after, after, 0.5)).toBeUndefined();
  });
});

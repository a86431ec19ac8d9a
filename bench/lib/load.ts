import { Pool } from "undici";

export interface LoadRequest {
  method: "GET" | "POST";
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadResult {
  requests: number;
  elapsedMs: number;
  perSecond: number;
  /** Latencies in ms, per outcome label ("201", "409 SOLD_OUT", …). */
  latencies: Record<string, number[]>;
  errors: number;
}

/**
 * A closed-loop load generator: `connections` keep-alive connections, each sending its next request
 * as soon as the previous answer arrives, until `total` requests are done. Outcomes are labelled by
 * status and problem code so latency can be reported per outcome.
 */
export async function runLoad(
  url: string,
  total: number,
  connections: number,
  next: (index: number) => LoadRequest,
): Promise<LoadResult> {
  const pool = new Pool(url, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
  const latencies: Record<string, number[]> = {};
  let issued = 0;
  let errors = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (issued < total) {
        const request = next(issued++);
        const t0 = performance.now();
        try {
          const response = await pool.request({
            method: request.method,
            path: request.path,
            headers: request.headers,
            body: request.body,
          });
          const text = await response.body.text();
          let label = String(response.statusCode);
          if (response.statusCode >= 400) {
            const code = /"code":"([A-Z_]+)"/.exec(text)?.[1];
            if (code) label = `${label} ${code}`;
          }
          latencies[label] ??= [];
          latencies[label].push(performance.now() - t0);
        } catch {
          errors += 1;
        }
      }
    }),
  );
  const elapsedMs = performance.now() - started;
  await pool.close();
  return { requests: total, elapsedMs, perSecond: (total / elapsedMs) * 1000, latencies, errors };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export function latencySummary(latencies: Record<string, number[]>) {
  return Object.fromEntries(
    Object.entries(latencies).map(([label, values]) => {
      const sorted = [...values].sort((a, b) => a - b);
      const round = (n: number) => Math.round(n * 100) / 100;
      return [
        label,
        {
          count: sorted.length,
          p50: round(percentile(sorted, 50)),
          p99: round(percentile(sorted, 99)),
          p999: round(percentile(sorted, 99.9)),
        },
      ];
    }),
  );
}

export function allLatencies(latencies: Record<string, number[]>): number[] {
  return Object.values(latencies)
    .flat()
    .sort((a, b) => a - b);
}

// A background flood of GETs on a thread of its own, so that the flood's thousands of sockets never
// delay the measuring of the load beside it (they share the CPU, as a real flood would, but not an
// event loop). Posts "flowing" once twice as many views as clients were sent, then its result when
// told to stop.
import { parentPort, workerData } from "node:worker_threads";
import { type Latency, type LoadRequest, latencySummary, runLoad } from "./load.ts";

export interface FloodOrder {
  urls: string[];
  connections: number;
  /** `unknown`: a random activity and SKU no sale uses, each a miss in Redis; otherwise this one path. */
  target: "unknown" | string;
  /** Each client's pause between an answer and its next view. */
  thinkMs: number;
}

/** What a flood did, posted when it stops. */
export interface FloodResult {
  requests: number;
  perSecond: number;
  errors: number;
  latencyMs: Record<string, Latency>;
}

const order = workerData as FloodOrder;
let stopped = false;
let flowing = false;
parentPort?.on("message", () => {
  stopped = true;
});

const unknownId = () => 900_000_000 + Math.floor(Math.random() * 100_000_000);
const next = (i: number): LoadRequest => {
  if (!flowing && i >= order.connections * 2) {
    flowing = true;
    parentPort?.postMessage({ flowing: true });
  }
  return {
    method: "GET",
    path: order.target === "unknown" ? `/v1/activities/${unknownId()}/skus/${unknownId()}` : order.target,
  };
};

const load = await runLoad(order.urls, Number.POSITIVE_INFINITY, order.connections, next, {
  stop: () => stopped,
  thinkMs: order.thinkMs,
});
const result: FloodResult = {
  requests: load.requests,
  perSecond: Math.round(load.perSecond),
  errors: load.errors,
  latencyMs: latencySummary(load.latencies),
};
parentPort?.postMessage({ result });

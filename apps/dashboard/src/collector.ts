import { type FlashgateRedis, skuRef } from "@flashgate/cache";
import { type DriftCheck, driftIncidents, latestDriftCheck } from "@flashgate/sync";
import {
  histogramBuckets,
  parsePrometheus,
  quantileBetween,
  type Sample,
  sumOf,
} from "@flashgate/telemetry/scrape";

interface SeriesPoint {
  at: number;
  lagP50Ms: number | null;
  lagP99Ms: number | null;
  appliedPerS: number | null;
  admissionsPerS: Record<string, number>;
}

/** One SKU's units as MySQL and Redis held them at one sample. */
interface SkuPoint {
  at: number;
  database: number | null;
  cache: number | null;
}

export interface DashboardSnapshot {
  at: number;
  /** When the maintainers' drift check behind `skus` ran (null: none has run), and how many SKUs it compared. */
  checkedAt: number | null;
  compared: number;
  skus: DriftCheck["skus"];
  series: SeriesPoint[];
  /** Per SKU ("activity:sku"), the last samples of available units in MySQL and in Redis. */
  skuHistory: Record<string, SkuPoint[]>;
  connectors: ConnectorState[] | { error: string };
  deadLetters: number | null;
  /** The database's replicas as the maintainer watches them, and the commits a failover lost (null: unknown). */
  database: { replicaLagSeconds: number | null; replicasDown: number | null; lostChanges: number | null };
  incidents: Record<string, unknown>[];
}

/** A connector's state and its tasks', as the maintainers' supervisor last saw them in Kafka Connect. */
interface ConnectorState {
  name: string;
  connector: { state: string };
  tasks: { id: number; state: string }[];
}

/** SKUs shown, the drifted first (as the check publishes them). */
const shownSkus = 50;

const scrape = async (url: string): Promise<Sample[] | undefined> => {
  try {
    const response = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(1500) });
    return response.ok ? parsePrometheus(await response.text()) : undefined;
  } catch {
    return undefined;
  }
};

/** The worst replica's lag, how many replicas stand still, and the lost commits named so far. */
function databaseOf(maintainer: Sample[] | undefined): DashboardSnapshot["database"] {
  if (!maintainer) return { replicaLagSeconds: null, replicasDown: null, lostChanges: null };
  const lags = maintainer
    .filter((s) => s.name === "flashgate_database_replica_lag_seconds" && Number.isFinite(s.value))
    .map((s) => s.value);
  const running = maintainer.filter((s) => s.name === "flashgate_database_replica_running");
  return {
    replicaLagSeconds: lags.length ? Math.max(...lags) : null,
    replicasDown: running.length ? running.filter((s) => s.value === 0).length : null,
    lostChanges: sumOf(maintainer, "flashgate_lost_changes_recorded"),
  };
}

/** The connectors from the maintainer's metrics: the dashboard has no route to Connect's REST API. */
function connectorsOf(maintainer: Sample[] | undefined): DashboardSnapshot["connectors"] {
  if (!maintainer) return { error: "the cache-maintainer did not answer" };
  if (maintainer.some((s) => s.name === "flashgate_connector_running" && s.labels.task === "unreachable"))
    return { error: "Kafka Connect unreachable" };
  const byName = new Map<string, ConnectorState>();
  for (const sample of maintainer) {
    if (sample.name !== "flashgate_connector_state" || sample.value !== 1) continue;
    const { connector: name = "", task, state = "" } = sample.labels;
    const entry = byName.get(name) ?? { name, connector: { state: "" }, tasks: [] };
    if (task === "connector") entry.connector.state = state;
    else entry.tasks.push({ id: Number(task), state });
    byName.set(name, entry);
  }
  return [...byName.values()].map((entry) => ({ ...entry, tasks: entry.tasks.sort((a, b) => a.id - b.id) }));
}

/**
 * Samples the numbers behind every panel: MySQL vs Redis per SKU (the maintainers' drift check, as it
 * published it: the dashboard holds no database account), the maintainer's and API's Prometheus metrics
 * as rates and quantiles, Connect's states as the maintainers last saw them.
 */
export function createCollector(deps: {
  redis: FlashgateRedis;
  maintainerUrl: string;
  apiMetricsUrl: string;
  points?: number;
}) {
  const series: SeriesPoint[] = [];
  const skuHistory = new Map<string, SkuPoint[]>();
  let lastCheckedAt: number | undefined;

  /** Appends each SKU's sample; a SKU no longer listed is dropped. */
  function recordSkus(at: number, skus: DriftCheck["skus"]) {
    const listed = new Set<string>();
    for (const sku of skus) {
      const key = skuRef(sku.activityId, sku.skuId);
      listed.add(key);
      const points = skuHistory.get(key) ?? [];
      points.push({ at, database: sku.database?.available ?? null, cache: sku.cache?.available ?? null });
      if (points.length > (deps.points ?? 150)) points.shift();
      skuHistory.set(key, points);
    }
    for (const key of skuHistory.keys()) if (!listed.has(key)) skuHistory.delete(key);
  }
  let previous: { at: number; maintainer?: Sample[]; api?: Sample[] } | undefined;

  async function sampleSeries(): Promise<{
    deadLetters: number | null;
    database: DashboardSnapshot["database"];
    connectors: DashboardSnapshot["connectors"];
  }> {
    const at = Date.now();
    const [maintainer, api] = await Promise.all([scrape(deps.maintainerUrl), scrape(deps.apiMetricsUrl)]);
    const point: SeriesPoint = { at, lagP50Ms: null, lagP99Ms: null, appliedPerS: null, admissionsPerS: {} };
    if (previous && maintainer && previous.maintainer) {
      const before = histogramBuckets(previous.maintainer, "flashgate_cdc_lag_seconds");
      const after = histogramBuckets(maintainer, "flashgate_cdc_lag_seconds");
      const p50 = quantileBetween(before, after, 0.5);
      const p99 = quantileBetween(before, after, 0.99);
      point.lagP50Ms = p50 === undefined ? null : Math.round(p50 * 1000);
      point.lagP99Ms = p99 === undefined ? null : Math.round(p99 * 1000);
      const seconds = (at - previous.at) / 1000;
      const applied = (s: Sample[]) => sumOf(s, "flashgate_cdc_events_total", { result: "applied" });
      point.appliedPerS = Math.max(0, (applied(maintainer) - applied(previous.maintainer)) / seconds);
    }
    if (previous && api && previous.api) {
      const seconds = (at - previous.at) / 1000;
      const outcomes = new Set(
        api.filter((s) => s.name === "flashgate_purchase_admissions_total").map((s) => s.labels.outcome),
      );
      for (const outcome of outcomes) {
        const now = sumOf(api, "flashgate_purchase_admissions_total", { outcome });
        const then = sumOf(previous.api, "flashgate_purchase_admissions_total", { outcome });
        point.admissionsPerS[outcome] = Math.max(0, (now - then) / seconds);
      }
    }
    previous = { at, maintainer: maintainer ?? previous?.maintainer, api: api ?? previous?.api };
    series.push(point);
    if (series.length > (deps.points ?? 150)) series.shift();
    return {
      deadLetters: maintainer ? sumOf(maintainer, "flashgate_cdc_dead_letters_total") : null,
      database: databaseOf(maintainer),
      connectors: connectorsOf(maintainer),
    };
  }

  return {
    async snapshot(): Promise<DashboardSnapshot> {
      const [{ deadLetters, database, connectors }, check, incidents] = await Promise.all([
        sampleSeries(),
        latestDriftCheck(deps.redis),
        driftIncidents(deps.redis, 30),
      ]);
      const at = Date.now();
      const skus = check?.skus.slice(0, shownSkus) ?? [];
      // A SKU's history gains a point per check, not per sample.
      if (check && check.checkedAt !== lastCheckedAt) recordSkus(check.checkedAt, skus);
      lastCheckedAt = check?.checkedAt;
      return {
        at,
        checkedAt: check?.checkedAt ?? null,
        compared: check?.compared ?? 0,
        skus,
        series: [...series],
        skuHistory: Object.fromEntries([...skuHistory].map(([key, points]) => [key, [...points]])),
        connectors,
        deadLetters,
        database,
        incidents,
      };
    },
  };
}

export type Collector = ReturnType<typeof createCollector>;

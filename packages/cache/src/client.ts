import { Cluster, Redis } from "ioredis";

/** One Redis server or a Redis Cluster: every command flashgate sends works on both. */
export type RedisClient = Redis | Cluster;

export interface RedisClientOptions {
  /** false: a command fails at once while disconnected (the purchase path answers 503 rather than wait). */
  enableOfflineQueue?: boolean;
  maxRetriesPerRequest?: number;
  connectTimeout?: number;
  lazyConnect?: boolean;
}

interface RedisSeeds {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
  /** The logical database of one server (`redis://…/2`); a Redis Cluster has database 0 alone. */
  database?: number;
}

/**
 * REDIS_URL is one server (`redis://:password@host:port`) or, when it lists several nodes separated by
 * commas, seeds of a Redis Cluster (`redis://:password@host:7000,host:7001,host:7002`): the client learns
 * the rest of the cluster and its slot map from whichever seed answers.
 */
export function parseRedisUrl(url: string): RedisSeeds {
  const [first, ...rest] = url.split(",").map((part) => part.trim());
  const head = new URL(first);
  if (head.protocol !== "redis:") throw new Error("REDIS_URL must start with redis://");
  const node = (parsed: URL) => ({ host: parsed.hostname, port: Number(parsed.port || 6379) });
  return {
    nodes: [
      node(head),
      ...rest.map((seed) => node(new URL(seed.includes("://") ? seed : `redis://${seed}`))),
    ],
    username: decodeURIComponent(head.username) || undefined,
    password: decodeURIComponent(head.password) || undefined,
    database: head.pathname.length > 1 ? Number(head.pathname.slice(1)) : undefined,
  };
}

/** A client for REDIS_URL: a Cluster when it names several seed nodes, else a plain connection. */
export function redisClient(url: string, options: RedisClientOptions = {}): RedisClient {
  const { nodes, username, password, database } = parseRedisUrl(url);
  if (database !== undefined && !(Number.isSafeInteger(database) && database >= 0))
    throw new Error("REDIS_URL's path must be a database number");
  if (nodes.length === 1) return new Redis({ ...nodes[0], username, password, db: database, ...options });
  if (database) throw new Error("a Redis Cluster has database 0 alone: REDIS_URL names another");
  const { enableOfflineQueue, lazyConnect, ...nodeOptions } = options;
  return new Cluster(nodes, {
    enableOfflineQueue,
    lazyConnect,
    redisOptions: { username, password, ...nodeOptions },
    // A failover promotes a replica within seconds: retry the moved slot soon, and often enough to see it.
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 100,
    slotsRefreshTimeout: 2000,
    slotsRefreshInterval: 5000,
  });
}

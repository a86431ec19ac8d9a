/** What the global setups hand every test file (vitest's provide and inject). */
declare module "vitest" {
  export interface ProvidedContext {
    /** The apps' environment on the whole test stack (integration, cluster, containers). */
    stackEnv: Record<string, string>;
    /** The real parts a fast tier needs: a Redis of its own, a migrated database of its own, or both. */
    fastTier: {
      stackEnv: Record<string, string>;
      redisUrl?: string;
      /** The purchase API's account, and the cache-maintainer's. */
      databaseUrl?: string;
      maintainerDatabaseUrl?: string;
    };
  }
}

export {};

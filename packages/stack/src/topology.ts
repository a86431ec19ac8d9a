import type { StackConfig } from "./config.ts";

/** How many processes of each kind a topology runs (FLASHGATE_TOPOLOGY). */
const sizes = {
  single: { redis: 1, kafka: 1, connect: 1, "purchase-api": 1, "cache-maintainer": 1 },
  cluster: { redis: 6, kafka: 3, connect: 2, "purchase-api": 2, "cache-maintainer": 2 },
} as const;

export type ScaledKind = keyof (typeof sizes)["single"];

/** The indexes 0…n-1 of a kind's instances. */
export const instances = (config: StackConfig, kind: ScaledKind): number[] =>
  Array.from({ length: sizes[config.FLASHGATE_TOPOLOGY][kind] }, (_, index) => index);

/** Instance i of a kind listens on the kind's port + 100·i, so one variable moves them all. */
export const instancePort = (base: number, index: number) => base + 100 * index;

/** A kind's name, numbered from 1 when the topology runs several (redis-1 … redis-6). */
export const instanceName = (config: StackConfig, kind: ScaledKind, index: number) =>
  instances(config, kind).length > 1 ? `${kind}-${index + 1}` : kind;

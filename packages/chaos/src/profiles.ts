import { type FaultKind, faultKinds } from "./faults.ts";

export interface ChaosProfile {
  name: string;
  /** How long buyers and faults run, before the sale is healed, swept and checked. */
  durationMs: number;
  skus: number;
  units: [number, number];
  users: number;
  clientsInFlight: number;
  /** Time between one fault's heal and the next fault. */
  faultGapMs: [number, number];
  faultHoldMs: [number, number];
  kinds: FaultKind[];
  /** Unpaid orders expire after this, releasing their unit to be sold again. */
  paymentTimeoutS: number;
  /** How long a client keeps retrying one key through 503s and lost connections. */
  retryBudgetMs: number;
  /** The drift check must say in-sync within this, once the faults are healed. */
  convergeWithinMs: number;
}

// Inside `npm test`: every fault kind at least once in under 90 s.
const short: ChaosProfile = {
  name: "short",
  durationMs: 45_000,
  skus: 4,
  units: [15, 40],
  users: 3000,
  clientsInFlight: 16,
  faultGapMs: [500, 1000],
  faultHoldMs: [500, 1500],
  kinds: faultKinds.filter((kind) => kind !== "kill-kafka" && kind !== "kill-connect"),
  paymentTimeoutS: 3,
  retryBudgetMs: 20_000,
  convergeWithinMs: 60_000,
};

export const profiles: Record<"short" | "long", ChaosProfile> = {
  short,
  // `npm run chaos`: ten minutes, bigger SKUs, longer faults.
  long: {
    ...short,
    name: "long",
    durationMs: 600_000,
    skus: 8,
    units: [40, 150],
    clientsInFlight: 32,
    faultGapMs: [2000, 8000],
    faultHoldMs: [1000, 5000],
    kinds: faultKinds,
    paymentTimeoutS: 4,
    retryBudgetMs: 30_000,
  },
};

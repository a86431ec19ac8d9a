import { setTimeout as sleep } from "node:timers/promises";
import { signPayload } from "@flashgate/auth";
import { createClient } from "@flashgate/client";
import { userToken } from "@flashgate/testkit/api-harness";

/** What one purchase attempt was told: an HTTP status, problem code and detail, or "network" when no answer came. */
interface Answer {
  /** When the request was sent, and when its answer came. */
  sentAt: number;
  at: number;
  status: number | "network";
  code?: string;
  detail?: string;
}

export interface KeyRecord {
  key: string;
  userId: number;
  activityId: number;
  skuId: number;
  answers: Answer[];
  /** The order's id, from an answer that carried the order (or from MySQL when every such answer was lost). */
  orderId?: string;
  paid?: boolean;
}

export interface Sku {
  activityId: number;
  skuId: number;
}

/**
 * A hostile but honest storefront: retries a 503, a 429 or a lost connection with the same
 * Idempotency-Key and backoff, within a budget, and records every answer per key.
 */
export function createBuyers(options: {
  apiUrl: string;
  authSecret: string;
  paymentSecret: string;
  retryBudgetMs: number;
}) {
  const keys = new Map<string, KeyRecord>();
  let requests = 0;
  let counter = 0;

  const newKey = (prefix: string) => {
    counter += 1;
    return `${prefix}-${Date.now().toString(36)}-${counter}`;
  };

  /** One purchase with its retries (the product's client: the same key on every retry); resolves with its record. */
  async function purchase(userId: number, sku: Sku, key = newKey(`u${userId}`)): Promise<KeyRecord> {
    const record = keys.get(key) ?? { key, userId, ...sku, answers: [] };
    keys.set(key, record);
    const client = createClient({
      baseUrl: options.apiUrl,
      token: userToken(options.authSecret, userId),
      attempts: Number.POSITIVE_INFINITY,
      giveUpAfterMs: options.retryBudgetMs,
      retryRateLimited: true,
      baseDelayMs: 50,
      maxDelayMs: 1000,
      timeoutMs: 3000,
      onAttempt: ({ sentAt, at, status, code, detail }) => {
        requests += 1;
        record.answers.push({ sentAt, at, status, code, detail });
      },
    });
    try {
      record.orderId = (await client.purchase(sku, key)).order.orderId;
    } catch {
      // Its answers are in the record: a refusal, or the last failure once the budget is spent.
    }
    return record;
  }

  /** The payment provider's signed callback: SUCCEEDED for this order. */
  async function pay(record: KeyRecord, amountCents: number, currency: string): Promise<void> {
    const raw = JSON.stringify({
      eventId: `pay-${record.key}`,
      orderId: record.orderId,
      status: "SUCCEEDED",
      amountCents,
      currency,
    });
    for (let attempt = 0; attempt < 20; attempt++) {
      const response = await fetch(`${options.apiUrl}/v1/payments/callback`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "flashgate-signature": signPayload(options.paymentSecret, raw),
        },
        body: raw,
        signal: AbortSignal.timeout(3000),
      }).catch(() => undefined);
      if (response?.ok) {
        const { outcome } = (await response.json()) as { outcome?: string };
        // A replayed event answers with the outcome it had the first time.
        record.paid = outcome === "PAID" || outcome === "ALREADY_PAID";
        return;
      }
      await sleep(200);
    }
  }

  return {
    purchase,
    pay,
    newKey,
    keys,
    get requests() {
      return requests;
    },
  };
}

import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { paths } from "./api.gen.ts";

type Json<
  Path extends keyof paths,
  Method extends keyof paths[Path],
  Status extends number,
> = paths[Path][Method] extends {
  responses: Record<Status, { content: { "application/json": infer Body } }>;
}
  ? Body
  : never;

type RequestBody<Path extends keyof paths, Method extends keyof paths[Path]> = paths[Path][Method] extends {
  requestBody: { content: { "application/json": infer Body } };
}
  ? Body
  : never;

export type Order = Json<"/v1/purchases", "post", 201>;
export type PurchaseTicket = Json<"/v1/tickets/{requestId}", "get", 200>;
export type SkuView = Json<"/v1/activities/{activityId}/skus/{skuId}", "get", 200>;
export type Activity = RequestBody<"/admin/v1/activities/{activityId}", "put">;
export type Sku = RequestBody<"/admin/v1/activities/{activityId}/skus/{skuId}", "put">;
export type SavedActivity = Json<"/admin/v1/activities/{activityId}", "put", 200>;
export type SavedSku = Json<"/admin/v1/activities/{activityId}/skus/{skuId}", "put", 200>;
export type Restocked = Json<"/admin/v1/activities/{activityId}/skus/{skuId}/restock", "post", 200>;
export type AdminSkuView = Json<"/admin/v1/activities/{activityId}/skus/{skuId}", "get", 200>;

/** An RFC 9457 problem the API answered, typed by its code (SOLD_OUT, ALREADY_PURCHASED, …). */
export class ApiProblem extends Error {
  override name = "ApiProblem";
  readonly status: number;
  readonly code: string;
  readonly traceId: string | undefined;
  readonly retryAfterS: number | undefined;
  constructor(
    status: number,
    body: { code?: string; detail?: string; traceId?: string },
    retryAfterS?: number,
  ) {
    super(`${status} ${body.code ?? "UNKNOWN"}: ${body.detail ?? ""}`);
    this.status = status;
    this.code = body.code ?? "UNKNOWN";
    this.traceId = body.traceId;
    this.retryAfterS = retryAfterS;
  }
}

/** One HTTP attempt of a call, as the client saw it: its answer's status, code and detail, or no answer. */
export interface ClientAttempt {
  method: string;
  path: string;
  baseUrl: string;
  sentAt: number;
  at: number;
  status: number | "network";
  code?: string;
  detail?: string;
}

export interface ClientOptions {
  /** The API, or several instances of it: each retry of a call goes to the next. */
  baseUrl: string | string[];
  /** A bearer token, or a function that gives the current one (a user's for purchases, an admin's for admin calls). */
  token?: string | (() => string);
  /** Attempts of a retried call (503 and network errors), at least 1. */
  attempts?: number;
  /** The first backoff; each retry doubles it up to maxDelayMs, and a longer Retry-After wins. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Per attempt. */
  timeoutMs?: number;
  /** No retry starts once this long has passed since a call's first attempt. */
  giveUpAfterMs?: number;
  /** A 429 is retried too, after its Retry-After (a buyer who would rather wait than be told no). */
  retryRateLimited?: boolean;
  /** Told of every attempt, retries included. */
  onAttempt?: (attempt: ClientAttempt) => void;
}

/** A fresh Idempotency-Key: a UUID is 36 characters of base64url's alphabet. */
export const newIdempotencyKey = (): string => randomUUID();

/**
 * A typed client of the purchase API. A purchase gets one Idempotency-Key, reused on every retry:
 * a 503 or a network error is retried with backoff (honouring Retry-After) and the key makes the retry
 * safe — it gets the order the first attempt placed, if it placed one. Every other failure is an
 * ApiProblem carrying the API's code. Reads and PUTs are retried alike; restocks and closures are not
 * (a retry of one that took effect would apply it twice, or fail).
 */
export function createClient(options: ClientOptions) {
  const attempts = Math.max(1, options.attempts ?? 5);
  const baseDelayMs = options.baseDelayMs ?? 100;
  const maxDelayMs = options.maxDelayMs ?? 2000;
  const timeoutMs = options.timeoutMs ?? 5000;
  const giveUpAfterMs = options.giveUpAfterMs ?? Number.POSITIVE_INFINITY;
  const baseUrls = typeof options.baseUrl === "string" ? [options.baseUrl] : options.baseUrl;
  const token = () => (typeof options.token === "function" ? options.token() : options.token);
  const retried = (status: number) => status === 503 || (status === 429 && options.retryRateLimited === true);
  // Full jitter around the backoff: clients refused together do not all come back together.
  const pause = (ms: number) => sleep(ms * (0.5 + Math.random()));

  async function call<T>(
    method: string,
    path: string,
    init: { body?: unknown; headers?: Record<string, string>; retry: boolean; timeoutMs?: number },
  ): Promise<{ status: number; body: T }> {
    const bearer = token();
    const startedAt = Date.now();
    for (let attempt = 1; ; attempt++) {
      const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
      const last = !init.retry || attempt >= attempts || Date.now() - startedAt > giveUpAfterMs;
      const baseUrl = baseUrls[(attempt - 1) % baseUrls.length];
      const sentAt = Date.now();
      const seen = (status: number | "network", code?: string, detail?: string) =>
        options.onAttempt?.({ method, path, baseUrl, sentAt, at: Date.now(), status, code, detail });
      let response: Response;
      try {
        response = await fetch(new URL(path, baseUrl), {
          method,
          headers: {
            ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
            ...(init.body === undefined ? {} : { "content-type": "application/json" }),
            ...init.headers,
          },
          body: init.body === undefined ? undefined : JSON.stringify(init.body),
          signal: AbortSignal.timeout(init.timeoutMs ?? timeoutMs),
        });
      } catch (error) {
        seen("network");
        if (last) throw error;
        await pause(backoff);
        continue;
      }
      const retryAfter = response.headers.get("retry-after");
      const retryAfterS = retryAfter === null ? undefined : Number(retryAfter);
      if (response.ok) {
        const body = (await response.json()) as T;
        seen(response.status);
        return { status: response.status, body };
      }
      const problemBody = (await response.json().catch(() => ({}))) as ConstructorParameters<
        typeof ApiProblem
      >[1];
      seen(response.status, problemBody.code, problemBody.detail);
      const problem = new ApiProblem(response.status, problemBody, retryAfterS);
      if (!retried(response.status) || last) throw problem;
      await sleep(Math.max(backoff, (retryAfterS ?? 0) * 1000));
    }
  }

  const sku = (activityId: number, skuId: number) => `/activities/${activityId}/skus/${skuId}`;
  const ticketOf = async (idempotencyKey: string, waitS = 0) =>
    (
      await call<PurchaseTicket>("GET", `/v1/tickets/${idempotencyKey}?wait=${waitS}`, {
        retry: true,
        // A long poll answers when the purchase is decided, or after waitS: not a slow server.
        timeoutMs: timeoutMs + waitS * 1000,
      })
    ).body;
  return {
    /**
     * Buys one unit. `created` is false when the key had already placed this order (a retry). A buyer
     * the API queued (202) is followed to their outcome: the order, or the refusal as an ApiProblem;
     * `queued` says they waited in line.
     */
    async purchase(
      item: { activityId: number; skuId: number },
      idempotencyKey = newIdempotencyKey(),
    ): Promise<{ order: Order; created: boolean; queued: boolean; idempotencyKey: string }> {
      const { status, body } = await call<Order | PurchaseTicket>("POST", "/v1/purchases", {
        // The SKU alone: the API refuses any other field, and a caller's object may carry more.
        body: { activityId: item.activityId, skuId: item.skuId },
        headers: { "idempotency-key": idempotencyKey },
        retry: true,
      });
      if (status !== 202)
        return { order: body as Order, created: status === 201, queued: false, idempotencyKey };
      let ticket = body as PurchaseTicket;
      while (ticket.state === "QUEUED") {
        const asked = Date.now();
        ticket = await ticketOf(idempotencyKey, 20);
        // Answered early and still queued: the API holds no more waiters just now; ask again in a second.
        if (ticket.state === "QUEUED" && Date.now() - asked < 10_000) await pause(1000);
      }
      if (ticket.refusal) throw new ApiProblem(ticket.refusal.status, ticket.refusal);
      return { order: ticket.order as Order, created: true, queued: true, idempotencyKey };
    },
    /** Where the caller's purchase under a key stands, waiting up to `waitS` seconds while it is queued. */
    ticketOf,
    /** The caller's purchase under a key. */
    purchaseOf: async (idempotencyKey: string) =>
      (await call<Order>("GET", `/v1/purchases/${idempotencyKey}`, { retry: true })).body,
    skuView: async (activityId: number, skuId: number) =>
      (await call<SkuView>("GET", `/v1${sku(activityId, skuId)}`, { retry: true })).body,
    admin: {
      saveActivity: async (id: number, activity: Activity) =>
        (await call<SavedActivity>("PUT", `/admin/v1/activities/${id}`, { body: activity, retry: true }))
          .body,
      saveSku: async (activityId: number, skuId: number, item: Sku) =>
        (await call<SavedSku>("PUT", `/admin/v1${sku(activityId, skuId)}`, { body: item, retry: true })).body,
      restock: async (activityId: number, skuId: number, delta: number, reason: string) =>
        (
          await call<Restocked>("POST", `/admin/v1${sku(activityId, skuId)}/restock`, {
            body: { delta, reason },
            retry: false,
          })
        ).body,
      skuView: async (activityId: number, skuId: number) =>
        (await call<AdminSkuView>("GET", `/admin/v1${sku(activityId, skuId)}`, { retry: true })).body,
      closeOrder: async (orderId: string) =>
        (await call<Order>("POST", `/admin/v1/orders/${orderId}/close`, { retry: false })).body,
    },
  };
}

export type FlashgateClient = ReturnType<typeof createClient>;

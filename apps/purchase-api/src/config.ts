import {
  appFields,
  databaseFields,
  defaultPorts,
  int,
  kafkaFields,
  kafkaSasl,
  parseConfig,
  secret,
} from "@flashgate/config";
import { admissions } from "@flashgate/db";
import { purchaseQueue } from "@flashgate/kafka";
import { z } from "zod";

const purchaseApiConfigSchema = z
  .object({
    ...appFields(defaultPorts.purchaseApi),
    ...databaseFields,
    // Where /metrics is served (with /healthz and /readyz), apart from the public port: the operators'
    // Prometheus reaches it, the internet does not. Unset: no /metrics over HTTP. 0: any free port.
    METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
    // Storefront tokens: signed with this shared secret (HS256; the local stack mints with it), or, when
    // AUTH_JWKS_URL is set, by the storefront's identity provider, whose key set it publishes (RS256,
    // ES256, EdDSA; JWT_ISSUER and JWT_AUDIENCE then required).
    AUTH_JWT_SECRET: secret(),
    AUTH_JWKS_URL: z.url().optional(),
    ADMIN_JWT_SECRET: secret(),
    PAYMENT_WEBHOOK_SECRET: secret(),
    // When set, every token (storefront and back-office) must carry this iss, and this aud.
    JWT_ISSUER: z.string().min(1).optional(),
    JWT_AUDIENCE: z.string().min(1).optional(),
    DB_POOL_SIZE: int(8),
    DB_READ_POOL_SIZE: int(2),
    DB_READ_QUEUE: int(64),
    DB_MAX_IN_FLIGHT: int(8),
    DB_MAX_QUEUE: int(256, 0),
    DB_MAX_BATCH: int(100),
    DB_QUEUE_TIMEOUT_MS: int(2000),
    DB_BATCH_GATHER_MS: int(5, 0),
    RESERVATION_TTL_MS: int(15_000),
    RATE_LIMIT: int(10),
    RATE_WINDOW_MS: int(1000),
    SOLD_OUT_CACHE_MS: int(250, 0),
    VIEW_CACHE_MS: int(250, 0),
    HTTP_HEADERS_TIMEOUT_MS: int(10_000),
    HTTP_REQUEST_TIMEOUT_MS: int(15_000),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: int(5_000),
    HTTP_MAX_CONNECTIONS: int(10_000),
    // One client may not hold them all; raise it behind a proxy, whose address every client shares.
    HTTP_MAX_CONNECTIONS_PER_ADDRESS: int(1_000),
    // Queued admission (ADR 0030), for an activity without an admission of its own. sync: an admitted buyer
    // waits for the database's decision. queued: every admitted buyer is answered 202 with a ticket and
    // decided by the queue's writers. auto: queued only while a decision waits longer than
    // QUEUE_AFTER_WAIT_MS for this instance's database slots. Queueing needs Kafka (KAFKA_BROKERS); with
    // none, or Kafka away, admitted buyers wait for their decision.
    PURCHASE_ADMISSION: z.enum(admissions).default("sync"),
    QUEUE_AFTER_WAIT_MS: int(200, 0),
    // A queued buyer's reservation and ticket: beyond the queue's worst wait (QUEUE_MAX_BACKLOG at the
    // writers' pace).
    QUEUE_RESERVATION_TTL_MS: int(600_000),
    QUEUE_MAX_BACKLOG: int(100_000),
    QUEUE_SEND_TIMEOUT_MS: int(2000),
    QUEUE_PARTITIONS: int(purchaseQueue.partitions),
    // With KAFKA_BROKERS, this instance also decides queued buyers, with up to DB_MAX_IN_FLIGHT
    // transactions of its own: off for instances that only admit.
    QUEUE_WRITER: z.enum(["on", "off"]).default("on"),
    // A writer takes a partition's buyers once its newest has been in line QUEUE_WRITER_QUIET_MS, and holds
    // off while buyers arrive faster than QUEUE_WRITER_YIELD_ABOVE a second (0: never), so that a rush's
    // admissions keep the machine — until its oldest buyer has waited QUEUE_WRITER_MAX_DEFER_MS.
    QUEUE_WRITER_QUIET_MS: int(250, 0),
    QUEUE_WRITER_YIELD_ABOVE: int(1000, 0),
    QUEUE_WRITER_MAX_DEFER_MS: int(5000, 0),
    // Buyers following their tickets (GET /v1/tickets/{key}?wait=…) held at once by this instance: well
    // below HTTP_MAX_CONNECTIONS, so that long polls never take the sockets purchases need.
    TICKET_MAX_WAITERS: int(2_000),
    ...kafkaFields,
    KAFKA_BROKERS: kafkaFields.KAFKA_BROKERS.optional(),
  })
  .refine(
    (config) =>
      config.AUTH_JWKS_URL === undefined ||
      (config.JWT_ISSUER !== undefined && config.JWT_AUDIENCE !== undefined),
    {
      path: ["AUTH_JWKS_URL"],
      message: "needs JWT_ISSUER and JWT_AUDIENCE: an identity provider serves more than flashgate",
    },
  )
  // One secret for both would let any storefront token pass as a back-office one.
  .refine((config) => config.AUTH_JWT_SECRET !== config.ADMIN_JWT_SECRET, {
    path: ["ADMIN_JWT_SECRET"],
    message: "must differ from AUTH_JWT_SECRET",
  })
  .refine((config) => config.PURCHASE_ADMISSION === "sync" || config.KAFKA_BROKERS !== undefined, {
    path: ["PURCHASE_ADMISSION"],
    message: "queues buyers on Kafka: needs KAFKA_BROKERS",
  })
  .transform(kafkaSasl);

export type PurchaseApiConfig = z.infer<typeof purchaseApiConfigSchema>;

export const loadConfig = (env: Record<string, string | undefined>) =>
  parseConfig(purchaseApiConfigSchema, env);

import { skuKeys } from "@flashgate/cache";
import type { Admission } from "@flashgate/db";
import {
  type AppProcess,
  createSale,
  dbaConnection,
  eventually,
  freshIds,
  skuInDatabase,
  sold,
  stackEnv,
  stackPart,
  startAppProcess,
  testContext,
} from "@flashgate/testkit";
import { type ApiHarness, startApi } from "@flashgate/testkit/purchase-api";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { RowDataPacket } from "mysql2/promise";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";

/**
 * Queued admission (ADR 0030) on real Kafka, MySQL and Redis: an API that only admits (QUEUE_WRITER=off)
 * and a writer in a process of its own, which the tests kill with SIGKILL and start again. No maintainer
 * runs here: each sale is loaded into the cache by the test, and an order's reservation stays (CDC would
 * remove it), so "every reservation released or turned into an order" is read as: each reservation left
 * is a buyer's with an order.
 */
describe("queued admission: every 202 becomes exactly one order or a told refusal", () => {
  let api: ApiHarness;
  let writer: AppProcess | undefined;
  const brokers = stackEnv().KAFKA_BROKERS;
  // Small transactions, one at a time: a sale of a few hundred takes the writer long enough to be killed mid-way.
  const startWriter = async () => {
    writer = await startAppProcess("purchase-api", {
      ...stackEnv(),
      QUEUE_WRITER: "on",
      DB_MAX_BATCH: "5",
      DB_MAX_IN_FLIGHT: "1",
    });
  };

  beforeAll(async () => {
    api = await startApi({
      env: {
        KAFKA_BROKERS: brokers,
        PURCHASE_ADMISSION: "queued",
        QUEUE_WRITER: "off",
        QUEUE_SEND_TIMEOUT_MS: "1000",
      },
    });
    await startWriter();
  }, 120_000);
  const backlog = async () => (await api.app.metrics.queueBacklog.get()).values[0]?.value ?? 0;
  // Each test starts with nothing left in line, as the admitting API reads it (once a second).
  beforeEach(async () => {
    await eventually(async () => expect(await backlog()).toBe(0), { timeoutMs: 30_000, intervalMs: 100 });
  }, 60_000);
  // A test that killed the writer leaves one running for the next, whatever it ended with.
  afterEach(async () => {
    if (writer?.child.exitCode !== null || writer?.child.signalCode !== null) await startWriter();
  }, 60_000);
  afterAll(async () => {
    await writer?.kill("SIGKILL");
    await api?.close();
  });

  const ticket = (userId: number, key: string, waitS = 0) => api.ticket(userId, key, waitS);
  const outcome = (userId: number, key: string) => api.outcome(userId, key);
  /** Each user's purchase, all at once, with who sent it. */
  const crowd = (users: number[], sale: { activityId: number; skuId: number }) =>
    Promise.all(users.map(async (userId) => ({ userId, ...(await api.purchase(userId, sale)) })));
  const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

  async function newSale(units: number, admission?: Admission) {
    const sale = freshIds();
    await createSale(api.pool, { ...sale, units, admission });
    await api.load(sale.activityId, sale.skuId);
    return sale;
  }
  async function ordersOf(sale: { activityId: number; skuId: number }) {
    const [rows] = await api.pool.query<RowDataPacket[]>(
      "SELECT user_id AS userId, request_id AS requestId FROM sale_order WHERE activity_id = ? AND sku_id = ?",
      [sale.activityId, sale.skuId],
    );
    return rows as { userId: string; requestId: string }[];
  }
  /** Each reservation left in Redis is a buyer's whose order exists: none was left dangling. */
  async function expectReservationsSettled(sale: { activityId: number; skuId: number }) {
    const held = await api.redis.zrange(skuKeys(sale.activityId, sale.skuId).reservations, "0", "-1");
    const buyers = new Set((await ordersOf(sale)).map((order) => String(order.userId)));
    expect(held.filter((user) => !buyers.has(user))).toEqual([]);
  }

  it("auto: a buyer of an idle database is decided at once (201); those who arrive while a decision waits are queued (202); each becomes one order", async () => {
    const auto = await startApi({
      env: {
        KAFKA_BROKERS: brokers,
        PURCHASE_ADMISSION: "auto",
        QUEUE_WRITER: "off",
        QUEUE_AFTER_WAIT_MS: "0",
        DB_MAX_IN_FLIGHT: "1",
        DB_BATCH_GATHER_MS: "20",
      },
    });
    try {
      const sale = await newSale(200);
      expect((await auto.purchase(5000, sale)).status).toBe(201);
      const answers = await Promise.all(
        range(5001, 100).map(async (userId) => ({ userId, ...(await auto.purchase(userId, sale)) })),
      );
      const statuses = answers.map((answer) => answer.status);
      expect(statuses.every((status) => status === 201 || status === 202)).toBe(true);
      expect(statuses).toContain(201);
      expect(statuses).toContain(202);
      const queued = answers.filter((answer) => answer.status === 202);
      const outcomes = await Promise.all(queued.map((answer) => outcome(answer.userId, answer.key)));
      expect(outcomes.map((o) => o.state)).toEqual(Array(queued.length).fill("CREATED"));
      const orders = await ordersOf(sale);
      expect(orders.length).toBe(101);
      expect(sold(await skuInDatabase(api.pool, sale.activityId, sale.skuId))).toBe(101);
    } finally {
      await auto.close();
    }
  }, 120_000);

  it("a crowd: those admitted are queued (202) and each becomes one order; the rest are refused at once", async () => {
    const sale = await newSale(20);
    const answers = await crowd(range(1000, 60), sale);
    const queued = answers.filter((answer) => answer.status === 202);
    expect(queued.length).toBe(20);
    expect(answers.filter((answer) => answer.status === 409).map((a) => a.body.code)).toEqual(
      Array(40).fill("SOLD_OUT"),
    );
    // Each answer as the OpenAPI document says (the contract test's tier has no Kafka to queue on).
    const document = (await (await fetch(`${api.url}/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<string, { responses: Record<number, { content: Record<string, { schema: object }> }> }>
      >;
    };
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const schemaOf = (path: string, method: string, status: number) =>
      ajv.compile(document.paths[path][method].responses[status].content["application/json"].schema);
    const isTicket202 = schemaOf("/v1/purchases", "post", 202);
    const isTicket = schemaOf("/v1/tickets/{requestId}", "get", 200);
    for (const answer of queued) {
      expect(answer.body.state).toBe("QUEUED");
      expect(answer.headers.get("location")).toBe(`/v1/tickets/${answer.key}`);
      expect(isTicket202(answer.body)).toBe(true);
    }
    const outcomes = await Promise.all(queued.map((answer) => outcome(answer.userId, answer.key)));
    expect(outcomes.every((body) => isTicket(body))).toBe(true);
    expect(outcomes.map((o) => o.state)).toEqual(Array(20).fill("CREATED"));
    const orders = await ordersOf(sale);
    expect(orders.length).toBe(20);
    expect(new Set(orders.map((o) => o.requestId))).toEqual(new Set(queued.map((answer) => answer.key)));
    expect(sold(await skuInDatabase(api.pool, sale.activityId, sale.skuId))).toBe(20);
    await expectReservationsSettled(sale);
  }, 120_000);

  it("an activity's own admission decides over the API's: a queued activity is queued where the API decides at once, a sync one decided at once where it queues", async () => {
    const deciding = await startApi({ env: { KAFKA_BROKERS: brokers, QUEUE_WRITER: "off" } });
    try {
      const queuedSale = await newSale(10, "queued");
      const plainSale = await newSale(10);
      const syncSale = await newSale(10, "sync");
      const atQueuedSale = await Promise.all(
        range(4000, 5).map(async (userId) => ({ userId, ...(await deciding.purchase(userId, queuedSale)) })),
      );
      expect(atQueuedSale.map((answer) => answer.status)).toEqual(Array(5).fill(202));
      expect((await deciding.purchase(4010, plainSale)).status).toBe(201);
      // The API that queues every activity without its own admission decides the sync activity's buyers at once.
      expect((await api.purchase(4011, syncSale)).status).toBe(201);
      const atPlainSale = await api.purchase(4012, plainSale);
      expect(atPlainSale.status).toBe(202);
      const outcomes = await Promise.all(atQueuedSale.map((answer) => outcome(answer.userId, answer.key)));
      expect(outcomes.map((o) => o.state)).toEqual(Array(5).fill("CREATED"));
      expect((await outcome(4012, atPlainSale.key)).state).toBe("CREATED");
      expect(sold(await skuInDatabase(api.pool, queuedSale.activityId, queuedSale.skuId))).toBe(5);
    } finally {
      await deciding.close();
    }
  }, 120_000);

  it("the writer killed with SIGKILL mid-sale and started again: no ticket lost, nothing sold twice", async () => {
    const sale = await newSale(300);
    const answers = await crowd(range(2000, 300), sale);
    expect(answers.map((answer) => answer.status)).toEqual(Array(300).fill(202));
    // Killed once it has decided some of them but not all.
    await eventually(async () => expect((await ordersOf(sale)).length).toBeGreaterThan(0), {
      timeoutMs: 30_000,
      intervalMs: 20,
    });
    await writer?.kill("SIGKILL");
    const decidedBeforeTheKill = (await ordersOf(sale)).length;
    await startWriter();
    const outcomes = await Promise.all(answers.map((answer) => outcome(answer.userId, answer.key)));
    expect(outcomes.every((o) => o.state === "CREATED")).toBe(true);
    const orders = await ordersOf(sale);
    expect(orders.length).toBe(300);
    expect(new Set(orders.map((o) => o.userId)).size).toBe(300);
    expect(sold(await skuInDatabase(api.pool, sale.activityId, sale.skuId))).toBe(300);
    await expectReservationsSettled(sale);
    // The kill fell mid-sale (not after the last order): what it proves was really tested.
    expect(decidedBeforeTheKill).toBeLessThan(300);
  }, 180_000);

  it("while the writer is down: the same key again gets the same ticket, the queue fills to its bound and then refuses, a DBA's closure is told through the tickets", async () => {
    const bounded = await startApi({
      env: {
        KAFKA_BROKERS: brokers,
        PURCHASE_ADMISSION: "queued",
        QUEUE_WRITER: "off",
        QUEUE_MAX_BACKLOG: "40",
      },
    });
    try {
      await writer?.kill("SIGKILL");
      const sale = await newSale(100);
      const first = await bounded.purchase(3000, sale);
      expect([first.status, first.body.state]).toEqual([202, "QUEUED"]);
      const again = await bounded.purchase(3000, sale, first.key);
      expect([again.status, again.body]).toEqual([202, first.body]);
      expect((await ticket(3000, first.key)).body.state).toBe("QUEUED");
      // The key names that place: another SKU bought with it is a reused key, and the ticket still tells the first.
      const other = await newSale(10);
      const reused = await bounded.purchase(3000, other, first.key);
      expect([reused.status, reused.body.code]).toEqual([409, "IDEMPOTENCY_KEY_REUSED"]);
      expect((await ticket(3000, first.key)).body).toMatchObject({ state: "QUEUED", skuId: sale.skuId });
      expect(await api.redis.zcard(skuKeys(other.activityId, other.skuId).reservations)).toBe(0);

      // Past the bound once the admitting API has read the backlog (once a second).
      const rest = await Promise.all(
        range(3001, 44).map(async (userId) => ({ userId, ...(await bounded.purchase(userId, sale)) })),
      );
      const queued = [{ userId: 3000, ...first }, ...rest];
      expect(queued.map((answer) => answer.status)).toEqual(Array(45).fill(202));
      await eventually(async () =>
        expect((await bounded.app.metrics.queueBacklog.get()).values[0]?.value).toBeGreaterThanOrEqual(40),
      );
      const refused = await Promise.all(range(3045, 5).map((userId) => bounded.purchase(userId, sale)));
      expect(refused.map((answer) => [answer.status, answer.headers.get("retry-after")])).toEqual(
        Array(5).fill([503, "5"]),
      );
      expect(refused[0].body.detail).toMatch(/queue is full/);
      // A refused buyer's reservation is freed at once; the queued ones' are held.
      expect(await api.redis.zcard(skuKeys(sale.activityId, sale.skuId).reservations)).toBe(45);

      const dba = await dbaConnection(testContext());
      await dba.query("UPDATE activity SET ends_at = NOW(3) - INTERVAL 1 SECOND WHERE id = ?", [
        sale.activityId,
      ]);
      await dba.end();
      await startWriter();
      const outcomes = await Promise.all(queued.map((answer) => outcome(answer.userId, answer.key)));
      expect(outcomes.map((o) => [o.state, o.refusal?.code, o.refusal?.status])).toEqual(
        Array(queued.length).fill(["REFUSED", "ACTIVITY_NOT_OPEN", 409]),
      );
      expect(await ordersOf(sale)).toEqual([]);
      expect(await api.redis.zcard(skuKeys(sale.activityId, sale.skuId).reservations)).toBe(0);
    } finally {
      await bounded.close();
    }
  }, 180_000);

  it("Kafka killed: admitted buyers are decided at once (201), never 5xx; Kafka back, they are queued again", async () => {
    const sale = await newSale(50);
    const kafka = await stackPart("kafka");
    await kafka.kill();
    try {
      const answers = await crowd(range(4000, 10), sale);
      expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(201));
    } finally {
      await kafka.restore();
    }
    // Healthy again: a buyer is queued and the writer decides them (until Kafka answers, each new buyer
    // is still decided at once: a buyer of their own per attempt).
    let user = 4100;
    const queued = await eventually(
      async () => {
        const answer = { userId: user, ...(await api.purchase(user++, sale)) };
        expect([201, 202]).toContain(answer.status);
        expect(answer.status).toBe(202);
        return answer;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    expect((await outcome(queued.userId, queued.key)).state).toBe("CREATED");
    expect(sold(await skuInDatabase(api.pool, sale.activityId, sale.skuId))).toBe(10 + (user - 4100));
  }, 240_000);
});

import { readFileSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import {
  connectClient,
  isRunning,
  kubernetesApi,
  offsetsConfigMap,
  offsetsConfigMapKey,
  type StrimziConnector,
  strimziConnectorControl,
} from "@flashgate/connect";
import {
  type AppProcess,
  cachedAvailable,
  clients,
  eventually,
  maintainerMetric,
  stackEnv,
  startMaintainer,
  testContext,
  testEngine,
} from "@flashgate/testkit";
import {
  type ConfigMapObject,
  type PolicyRule,
  type StrimziOperatorFake,
  startStrimziOperator,
} from "@flashgate/testkit/strimzi-operator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import {
  connector,
  expectCdcFlows,
  failTaskByWrongPassword,
  resetBinlog,
  resetStatement,
  setAvailable,
  setDebeziumPassword,
  soldOut,
} from "./cdc-faults.ts";

/** The objects deploy/kubernetes defines in one file of its base. */
const manifests = (file: string) =>
  parseAllDocuments(
    readFileSync(new URL(`../../../deploy/kubernetes/base/${file}`, import.meta.url), "utf8"),
  ).map((document) => document.toJS() as { kind: string; metadata: { name: string }; rules?: PolicyRule[] });

/**
 * Connect's REST API as a NetworkPolicy and Strimzi leave it to the maintainer under Kubernetes: it may
 * read; a write would be the operator's to revert, so here it is refused and counted.
 */
async function readOnlyConnect(target: string) {
  const writes: string[] = [];
  const upstream = new URL(target);
  const server = createServer((request, response) => {
    if (request.method !== "GET") {
      writes.push(`${request.method} ${request.url}`);
      response.writeHead(403, { "content-type": "application/json" });
      return response.end(JSON.stringify({ error_code: 403, message: "read-only" }));
    }
    const forwarded = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: request.url,
        method: "GET",
        headers: request.headers,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on("error", () => response.destroy());
    forwarded.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    writes,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

// The operator path acts on the connector the same way on either engine; it runs once, on MySQL.
describe.runIf(testEngine === "mysql")(
  "CDC heals itself through Strimzi's operator (CONNECTOR_CONTROL=strimzi)",
  () => {
    const c = clients();
    let operator: StrimziOperatorFake;
    let rest: Awaited<ReturnType<typeof readOnlyConnect>>;
    let maintainer: AppProcess;
    const namespace = "flashgate";
    const resourcePath = `/apis/kafka.strimzi.io/v1/namespaces/${namespace}/kafkaconnectors/${connector}`;

    beforeAll(async () => {
      const resource = manifests("connect.yaml").find(
        (o) => o.kind === "KafkaConnector",
      ) as unknown as StrimziConnector;
      const maintainerObjects = manifests("cache-maintainer.yaml");
      operator = await startStrimziOperator({
        connect: connectClient(stackEnv().KAFKA_CONNECT_URL),
        namespace,
        connector: resource,
        configMaps: maintainerObjects.filter((o) => o.kind === "ConfigMap") as unknown as ConfigMapObject[],
        // The Role deploy/kubernetes binds to the maintainer: the tests prove it is enough.
        rules: maintainerObjects.find((o) => o.kind === "Role")?.rules ?? [],
        resyncMs: 5000,
      });
      rest = await readOnlyConnect(stackEnv().KAFKA_CONNECT_URL);
      maintainer = await startMaintainer({
        CDC_STALL_MS: "0",
        LOG_LEVEL: "info",
        CONNECTOR_CONTROL: "strimzi",
        KAFKA_CONNECT_URL: rest.url,
        KUBERNETES_API_URL: operator.url,
        KUBERNETES_TOKEN_FILE: operator.tokenFile,
        KUBERNETES_NAMESPACE: namespace,
      });
    });
    afterAll(async () => {
      try {
        await setDebeziumPassword(testContext().secrets.debeziumDbPassword);
        await expectCdcFlows(c);
      } finally {
        await maintainer?.kill();
        await rest?.close();
        await operator?.close();
        await c.close();
      }
    }, 300_000);

    /** Nothing was asked of Connect but reads, and the API server refused nothing of the Role's holder. */
    function expectOnlyThroughTheOperator() {
      expect(rest.writes).toEqual([]);
      expect(operator.refused).toEqual([]);
      expect(operator.connector().metadata.annotations ?? {}).toEqual({});
      expect(operator.connector().spec.state ?? "running").toBe("running");
    }

    it("a task FAILED by a real wrong password: restarted through strimzi.io/restart, and the restock after the fix reaches Redis", async () => {
      let sale: Awaited<ReturnType<typeof failTaskByWrongPassword>>;
      try {
        sale = await failTaskByWrongPassword(c);
        // The supervisor asks; the operator restarts (and the task fails again while the password is wrong).
        await eventually(async () => expect(operator.actions).toContain("restart includeTasks onlyFailed"), {
          timeoutMs: 60_000,
          intervalMs: 250,
        });
      } finally {
        await setDebeziumPassword(testContext().secrets.debeziumDbPassword);
      }
      await setAvailable(c, sale, 9);
      await eventually(
        async () => expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(9),
        {
          timeoutMs: 120_000,
          intervalMs: 250,
        },
      );
      expect(await maintainerMetric(maintainer, "flashgate_connector_restarts_total")).toBeGreaterThanOrEqual(
        1,
      );
      expect(operator.connector().status?.connectorStatus).toMatchObject({ connector: { state: "RUNNING" } });
      expectOnlyThroughTheOperator();
    }, 240_000);

    it(`a real ${resetStatement} while the connector is stopped by its resource: the lost position reset through spec.state and strimzi.io/connector-offsets, and the restock reaches Redis`, async () => {
      const sale = await soldOut(c);
      const kubernetes = kubernetesApi({ url: operator.url, tokenFile: operator.tokenFile });
      const direct = connectClient(stackEnv().KAFKA_CONNECT_URL);
      const repositions = await maintainerMetric(maintainer, "flashgate_connector_repositions_total");
      // An operator stops it the Kubernetes way (a REST stop would be reverted by the next reconcile).
      await kubernetes.mergePatch(resourcePath, { spec: { state: "stopped" } });
      try {
        await direct.stopped(connector);
        await resetBinlog();
        await setAvailable(c, sale, 5);
      } finally {
        await kubernetes.mergePatch(resourcePath, { spec: { state: "running" } });
      }
      await eventually(
        async () => expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(5),
        {
          timeoutMs: 180_000,
          intervalMs: 250,
        },
      );
      // The watchdog sees the binlog step back; the supervisor resets the position through the resource.
      await eventually(
        async () => {
          const reset = operator.actions.lastIndexOf("reset offsets");
          expect(reset).toBeGreaterThan(0);
          expect(operator.actions.slice(reset - 1, reset + 2)).toEqual(["stop", "reset offsets", "resume"]);
        },
        { timeoutMs: 120_000 },
      );
      expect(await maintainerMetric(maintainer, "flashgate_connector_repositions_total")).toBeGreaterThan(
        repositions,
      );
      await direct.waitUntil(connector, isRunning, { timeoutMs: 120_000, failedGraceMs: 120_000 });
      await setAvailable(c, sale, 4);
      await eventually(
        async () => expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(4),
        {
          timeoutMs: 60_000,
        },
      );
      expectOnlyThroughTheOperator();
    }, 300_000);

    it("an offset rewritten through the ConfigMap and strimzi.io/connector-offsets=alter (a failover's trim): the connector resumes from it", async () => {
      const direct = connectClient(stackEnv().KAFKA_CONNECT_URL);
      const control = strimziConnectorControl({
        kubernetes: kubernetesApi({ url: operator.url, tokenFile: operator.tokenFile }),
        namespace,
        rest: direct,
      });
      await direct.waitUntil(connector, isRunning, { timeoutMs: 120_000, failedGraceMs: 120_000 });
      // An offset stored (flushed every second; the reset before may have left none yet).
      await eventually(async () => expect(await direct.sourceOffset(connector)).toBeDefined());
      // The position it holds, written back: the operator acts only once Connect has taken the ConfigMap's body.
      await control.alterSourceOffset(connector, (offset) => offset);
      // The operator resumes it at its next reconcile, as Strimzi does.
      await eventually(async () =>
        expect(operator.actions.slice(-3)).toEqual(["stop", "alter offsets", "resume"]),
      );
      expect(
        JSON.parse(operator.configMap(offsetsConfigMap(connector))?.data?.[offsetsConfigMapKey] ?? "{}"),
      ).toMatchObject({
        offsets: [
          {
            partition: { server: "flashgate" },
            offset: { file: expect.any(String), pos: expect.any(Number) },
          },
        ],
      });
      // Streaming on from it, no snapshot: the next change flows through CDC.
      await expectCdcFlows(c);
      expectOnlyThroughTheOperator();
    }, 240_000);
  },
);

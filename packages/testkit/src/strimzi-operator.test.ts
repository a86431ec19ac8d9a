import { readFileSync, writeFileSync } from "node:fs";
import {
  connectClient,
  type KubernetesError,
  kubernetesApi,
  type StrimziConnector,
} from "@flashgate/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  allowed,
  mergePatch,
  restartAnnotation,
  type StrimziOperatorFake,
  startStrimziOperator,
} from "./strimzi-operator.ts";

// What makes the stand-in faithful where it can be checked without an API server: Strimzi's own table of
// restart annotations, RFC 7386's own examples, RBAC's matching, and the API server's refusals.

describe("restartAnnotation: Strimzi's rule for strimzi.io/restart", () => {
  it.each([
    ["includeTasks,onlyFailed", { valid: true, includeTasks: true, onlyFailed: true }],
    ["includeTasks", { valid: true, includeTasks: true, onlyFailed: false }],
    ["onlyFailed", { valid: true, includeTasks: false, onlyFailed: true }],
    ["true", { valid: true, includeTasks: false, onlyFailed: false }],
    ["true,includeTasks,onlyFailed", { valid: false }],
    ["includeTasks,wrongArg", { valid: false }],
  ])("%s", (value, expected) => expect(restartAnnotation(value)).toMatchObject(expected));

  it.each([["false,includeTasks,onlyFailed"], ["false"], [""], [undefined]])("%s asks for nothing", (value) =>
    expect(restartAnnotation(value)).toBeUndefined(),
  );
});

describe("mergePatch: RFC 7386's examples", () => {
  it.each([
    [{ a: "b" }, { a: "c" }, { a: "c" }],
    [{ a: "b" }, { b: "c" }, { a: "b", b: "c" }],
    [{ a: "b" }, { a: null }, {}],
    [{ a: "b", b: "c" }, { a: null }, { b: "c" }],
    [{ a: ["b"] }, { a: "c" }, { a: "c" }],
    [{ a: "c" }, { a: ["b"] }, { a: ["b"] }],
    [{ a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
    [{ a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
    [
      ["a", "b"],
      ["c", "d"],
      ["c", "d"],
    ],
    [{ a: "b" }, ["c"], ["c"]],
    [{ a: "foo" }, null, null],
    [{ a: "foo" }, "bar", "bar"],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: "b", c: null }, { a: "b" }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])("%j patched by %j is %j", (target, patch, result) => expect(mergePatch(target, patch)).toEqual(result));
});

describe("allowed: a Role's rules", () => {
  const rules = [{ apiGroups: [""], resources: ["configmaps"], resourceNames: ["mine"], verbs: ["patch"] }];
  it("allows the named object's listed verb only", () => {
    const request = { verb: "patch", apiGroup: "", resource: "configmaps", name: "mine" };
    expect(allowed(rules, request)).toBe(true);
    expect(allowed(rules, { ...request, verb: "get" })).toBe(false);
    expect(allowed(rules, { ...request, name: "other" })).toBe(false);
    expect(allowed(rules, { ...request, apiGroup: "apps" })).toBe(false);
    expect(allowed([{ ...rules[0], resourceNames: [] }], { ...request, name: "other" })).toBe(true);
  });
});

describe("the API server's refusals", () => {
  let fake: StrimziOperatorFake;
  const connector: StrimziConnector = {
    apiVersion: "kafka.strimzi.io/v1",
    kind: "KafkaConnector",
    metadata: { name: "sale", namespace: "flashgate", labels: { "strimzi.io/cluster": "flashgate" } },
    spec: { class: "io.debezium.connector.mysql.MySqlConnector", tasksMax: 1 },
  };
  const path = "/apis/kafka.strimzi.io/v1/namespaces/flashgate/kafkaconnectors/sale";
  beforeAll(async () => {
    fake = await startStrimziOperator({
      // No Connect behind it: each reconcile ends in a warning, which these tests do not need.
      connect: connectClient("http://127.0.0.1:9"),
      namespace: "flashgate",
      connector,
      configMaps: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "offsets" }, data: {} }],
      rules: [
        {
          apiGroups: ["kafka.strimzi.io"],
          resources: ["kafkaconnectors"],
          resourceNames: ["sale"],
          verbs: ["get", "patch"],
        },
        { apiGroups: [""], resources: ["configmaps"], resourceNames: ["offsets"], verbs: ["patch"] },
      ],
    });
  });
  afterAll(() => fake.close());
  const api = () => kubernetesApi({ url: fake.url, tokenFile: fake.tokenFile });
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: KubernetesError) => [error.name, error.status],
    );

  it("serves the resource to the token's holder, and refuses a wrong token with 401", async () => {
    expect((await api().get(path))?.metadata).toMatchObject({ name: "sale", generation: 1 });
    const wrong = `${fake.tokenFile}.wrong`;
    writeFileSync(wrong, "not-the-token");
    expect(await failure(kubernetesApi({ url: fake.url, tokenFile: wrong }).get(path))).toEqual([
      "KubernetesError",
      401,
    ]);
  });

  it("refuses what the Role does not grant with 403: another object, another verb", async () => {
    expect(await failure(api().get("/api/v1/namespaces/flashgate/configmaps/offsets"))).toEqual([
      "KubernetesError",
      403,
    ]);
    expect(
      await failure(api().mergePatch("/api/v1/namespaces/flashgate/configmaps/other", { data: {} })),
    ).toEqual(["KubernetesError", 403]);
    expect(fake.refused).toContain("GET /api/v1/namespaces/flashgate/configmaps/offsets 403");
  });

  it("answers 404 for another namespace's object, as for no object", async () => {
    expect(await api().get(path.replace("/flashgate/", "/other/"))).toBeUndefined();
  });

  it("merges a patch: generation counts spec changes only, status is a subresource, a stale resourceVersion is a 409, an invalid state a 422", async () => {
    const before = (await api().get<StrimziConnector>(path)) as StrimziConnector;
    const annotated = await api().mergePatch<StrimziConnector>(path, {
      metadata: { annotations: { "strimzi.io/restart": "includeTasks" } },
      status: { observedGeneration: 99 },
    });
    expect(annotated.metadata.generation).toBe(before.metadata.generation);
    expect(Number(annotated.metadata.resourceVersion)).toBeGreaterThan(
      Number(before.metadata.resourceVersion),
    );
    expect(annotated.status?.observedGeneration).not.toBe(99);
    const stopped = await api().mergePatch<StrimziConnector>(path, { spec: { state: "stopped" } });
    expect(stopped.metadata.generation).toBe((before.metadata.generation ?? 0) + 1);
    expect(stopped.spec.class).toBe(connector.spec.class);
    expect(
      await failure(
        api().mergePatch(path, { metadata: { resourceVersion: before.metadata.resourceVersion } }),
      ),
    ).toEqual(["KubernetesError", 409]);
    expect(await failure(api().mergePatch(path, { spec: { state: "halted" } }))).toEqual([
      "KubernetesError",
      422,
    ]);
  });

  it("takes merge patches only (415 for a JSON patch)", async () => {
    const response = await fetch(`${fake.url}${path}`, {
      method: "PATCH",
      headers: {
        authorization: `Bearer ${readFileSync(fake.tokenFile, "utf8")}`,
        "content-type": "application/json-patch+json",
      },
      body: JSON.stringify([{ op: "replace", path: "/spec/state", value: "running" }]),
    });
    expect(response.status).toBe(415);
  });
});

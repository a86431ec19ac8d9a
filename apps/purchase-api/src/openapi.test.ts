import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { openApiDocument, operations } from "./openapi.ts";
import { problems } from "./problem.ts";

describe("the OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const validator = new Validator();
    const result = await validator.validate(openApiDocument());
    expect(result.errors ?? []).toEqual([]);
    expect([result.valid, validator.version]).toEqual([true, "3.1"]);
  });

  it("gives each route its problems by status, with the 413's wire code, and Retry-After on 429 and 503", () => {
    const { paths } = openApiDocument();
    const purchase = paths["/v1/purchases"].post as { responses: Record<string, Record<string, unknown>> };
    const codes = (status: number) =>
      (
        purchase.responses[status].content as Record<
          string,
          { schema: { properties: { code: { enum: string[] } } } }
        >
      )["application/problem+json"].schema.properties.code.enum;
    expect(codes(409)).toEqual([
      "SOLD_OUT",
      "ALREADY_PURCHASED",
      "IDEMPOTENCY_KEY_REUSED",
      "ACTIVITY_NOT_OPEN",
    ]);
    expect(codes(413)).toEqual(["INVALID_REQUEST"]);
    expect(Object.keys(purchase.responses[429].headers as object)).toEqual(["Retry-After"]);
    expect(Object.keys(purchase.responses[503].headers as object)).toEqual(["Retry-After"]);
    expect(purchase.responses[409].headers).toBeUndefined();
    for (const operation of operations)
      for (const code of operation.problems)
        expect(problems[code].status, `${operation.path} ${code}`).toBeGreaterThanOrEqual(400);
  });

  it("takes request bodies as input (defaults optional) and names the security of each route", () => {
    const { paths } = openApiDocument();
    const activity = paths["/admin/v1/activities/{activityId}"].put as {
      requestBody: { content: { "application/json": { schema: { required: string[] } } } };
      security: unknown;
    };
    expect(activity.requestBody.content["application/json"].schema.required).toEqual([
      "name",
      "startsAt",
      "endsAt",
    ]);
    expect(activity.security).toEqual([{ admin: [] }]);
    expect((paths["/v1/activities/{activityId}/skus/{skuId}"].get as { security: unknown }).security).toEqual(
      [],
    );
    expect((paths["/v1/payments/callback"].post as { security: unknown }).security).toEqual([
      { signature: [] },
    ]);
  });
});

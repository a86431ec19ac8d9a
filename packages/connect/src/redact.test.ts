import { describe, expect, it } from "vitest";
import { redactedTrace } from "./rest.ts";

const trace = [
  "org.apache.kafka.connect.errors.ConnectException: Access denied; database.password=s3cr3t-v@lue, user=debezium",
  "\tat io.debezium.connector.mysql.MySqlConnectorTask.start(MySqlConnectorTask.java:123)",
  "Caused by: java.sql.SQLException: token: abc.def.ghi",
].join("\n");

describe("connector traces as logged", () => {
  it("keep the exception's line, drop the stack, mask password-like values", () => {
    const shown = redactedTrace(trace);
    expect(shown).toBe(
      "org.apache.kafka.connect.errors.ConnectException: Access denied; database.password=***, user=debezium",
    );
    expect(shown).not.toContain("s3cr3t");
    expect(redactedTrace(undefined)).toBeUndefined();
    expect(redactedTrace(`password="a b c" ${"x".repeat(1000)}`)).toMatch(/^password=\*\*\* x+$/);
    expect(redactedTrace("x".repeat(1000))?.length).toBe(300);
  });
});

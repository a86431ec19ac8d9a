import { connectClient, readConnectorFile } from "@flashgate/connect";
import { appDbUser, databaseName, debeziumDbUser, maintainerDbUser, migrate } from "@flashgate/db";
import { adminConnection, connectorFile, connectUrl, registerConnector } from "@flashgate/stack";
import { eventually, testContext } from "@flashgate/testkit";
import { describe, expect, it } from "vitest";

describe("registering the connector", () => {
  it("restarts a task that FAILED and waits until it runs (an upgrade, a password fixed meanwhile)", async () => {
    const ctx = testContext();
    const { name } = readConnectorFile(ctx.paths.connectorsDir, connectorFile(ctx));
    const client = connectClient(connectUrl(ctx));
    const admin = await adminConnection(ctx);
    try {
      await admin.query("ALTER USER ?@'%' IDENTIFIED BY 'a-password-the-connector-does-not-know'", [
        debeziumDbUser,
      ]);
      await client.restart(name, false);
      await eventually(
        async () => expect((await client.status(name)).tasks.map((task) => task.state)).toEqual(["FAILED"]),
        { timeoutMs: 90_000, intervalMs: 500 },
      );
    } finally {
      await migrate(admin, {
        database: databaseName,
        appUser: { name: appDbUser, password: ctx.secrets.appDbPassword },
        maintainerUser: { name: maintainerDbUser, password: ctx.secrets.maintainerDbPassword },
        debeziumUser: { name: debeziumDbUser, password: ctx.secrets.debeziumDbPassword },
      });
      await admin.end();
    }
    await registerConnector(ctx);
    const status = await client.status(name);
    expect([status.connector.state, ...status.tasks.map((task) => task.state)]).toEqual([
      "RUNNING",
      "RUNNING",
    ]);
  });
});

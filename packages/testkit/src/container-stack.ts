import { redisClient } from "@flashgate/cache";
import {
  connectorEnv,
  dashboardRedisUser,
  registerConnector,
  runMigrations,
  type StackContext,
} from "@flashgate/stack";
import { MariaDbContainer } from "@testcontainers/mariadb";
import { MySqlContainer } from "@testcontainers/mysql";
import { RedisContainer } from "@testcontainers/redis";
import {
  GenericContainer,
  getContainerRuntimeClient,
  Network,
  type StartedNetwork,
  type StartedTestContainer,
  Wait,
} from "testcontainers";

/** Row binlog with GTIDs, both logs synced per commit: what the native stack's database runs with. */
const mysqlFlags = [
  "--server-id=1",
  "--log-bin=binlog",
  "--binlog-format=ROW",
  "--binlog-row-image=FULL",
  "--gtid-mode=ON",
  "--enforce-gtid-consistency=ON",
  "--sync-binlog=1",
  "--innodb-flush-log-at-trx-commit=1",
];
const mariadbFlags = ["--server-id=1", "--log-bin=binlog", "--binlog-format=ROW", "--binlog-row-image=FULL"];

/** The parts a test may kill and bring back (recovery tests): named, so any process can find them. */
export const containerNames = { kafka: "flashgate-test-kafka", connect: "flashgate-test-connect" } as const;

/**
 * The test stack in containers (FLASHGATE_TEST_STACK=containers), started by testcontainers: the MySQL or
 * MariaDB and Redis modules, and generic containers for Kafka and Connect (the flashgate Kafka image,
 * docker/kafka). Each publishes the native test stack's own port, so the tests, the apps they start and
 * the stack's code (migrations, the connector's registration) run unchanged; the containers reach each
 * other by name on a network of their own. `images` are the compose variables' values.
 */
export async function startContainerStack(ctx: StackContext, images: Record<string, string>) {
  const { config, secrets } = ctx;
  const network: StartedNetwork = await new Network().start();
  const started: StartedTestContainer[] = [];
  const stop = async () => {
    for (const container of started.reverse()) await container.stop({ timeout: 5_000 }).catch(() => {});
    await network.stop().catch(() => {});
  };
  try {
    const database =
      config.FLASHGATE_DB === "mysql"
        ? new MySqlContainer(images.MYSQL_IMAGE)
            .withRootPassword(secrets.databaseRootPassword)
            .withCommand(mysqlFlags)
        : new MariaDbContainer(images.MARIADB_IMAGE)
            .withRootPassword(secrets.databaseRootPassword)
            .withCommand(mariadbFlags);
    started.push(
      await database
        .withNetwork(network)
        .withNetworkAliases("database")
        .withExposedPorts({ container: 3306, host: config.FLASHGATE_DB_PORT })
        .start(),
    );
    await runMigrations(ctx);
    const redis = await new RedisContainer(images.REDIS_IMAGE)
      .withPassword(secrets.redisPassword)
      .withExposedPorts({ container: 6379, host: config.FLASHGATE_REDIS_PORT })
      .start();
    started.push(redis);
    // The dashboard's read-only user, as the compose file's Redis is given it.
    const admin = redisClient(
      `redis://:${encodeURIComponent(secrets.redisPassword)}@127.0.0.1:${redis.getPort()}`,
    );
    try {
      await admin.call(
        "ACL",
        "SETUSER",
        dashboardRedisUser.name,
        "on",
        `>${secrets.dashboardRedisPassword}`,
        ...dashboardRedisUser.rules.split(" "),
      );
    } finally {
      admin.disconnect();
    }
    // Two listeners: the network's (kafka:9092, for Connect) and the host's, advertised as its own port.
    const hostPort = config.FLASHGATE_KAFKA_PORT;
    started.push(
      await new GenericContainer(images.FLASHGATE_KAFKA_IMAGE)
        .withName(containerNames.kafka)
        .withCommand(["broker"])
        .withNetwork(network)
        .withNetworkAliases("kafka")
        .withEnvironment({
          KAFKA_LISTENERS: `PLAINTEXT://0.0.0.0:9092,HOST://0.0.0.0:${hostPort},CONTROLLER://localhost:9093`,
          KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://kafka:9092,HOST://127.0.0.1:${hostPort}`,
          KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: "PLAINTEXT:PLAINTEXT,HOST:PLAINTEXT,CONTROLLER:PLAINTEXT",
          KAFKA_HEAP: config.FLASHGATE_KAFKA_HEAP,
        })
        .withExposedPorts({ container: hostPort, host: hostPort })
        .withWaitStrategy(Wait.forListeningPorts())
        .withStartupTimeout(120_000)
        .start(),
    );
    // The connector's ${env:…} placeholders, as the native worker gets them, but seen from the network.
    started.push(
      await new GenericContainer(images.FLASHGATE_KAFKA_IMAGE)
        .withName(containerNames.connect)
        .withCommand(["connect"])
        .withNetwork(network)
        .withEnvironment({
          ...connectorEnv(ctx),
          FLASHGATE_DB_HOST: "database",
          FLASHGATE_DB_PORT: "3306",
          FLASHGATE_KAFKA_BOOTSTRAP: "kafka:9092",
          CONNECT_HEAP: config.FLASHGATE_CONNECT_HEAP,
        })
        .withExposedPorts({ container: 8083, host: config.FLASHGATE_CONNECT_PORT })
        .withWaitStrategy(Wait.forHttp("/connector-plugins", 8083))
        .withStartupTimeout(180_000)
        .start(),
    );
    await registerConnector(ctx);
  } catch (error) {
    await stop();
    throw error;
  }
  return { stop };
}

/** Kills a container of the test stack at once (SIGKILL, as `kill -9` a native process), or starts it again. */
export async function containerPart(name: string) {
  const client = await getContainerRuntimeClient();
  const container = client.container.getById(name);
  return {
    kill: () => client.container.stop(container, { timeout: 0 }),
    start: () => client.container.start(container),
  };
}

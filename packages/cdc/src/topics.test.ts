import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { topicPartitions, topics } from "./topics.ts";

const connectorFiles = ["flashgate-mysql.json", "flashgate-mariadb.json"];
const configOf = (file: string): Record<string, string> =>
  JSON.parse(readFileSync(new URL(`../../../connectors/${file}`, import.meta.url), "utf8")).config;

describe("the connector files and the topic layout the maintainer reads", () => {
  it.each(connectorFiles)("%s routes to the same topics, with the same partition count", (file) => {
    const config = configOf(file);
    expect(config["topic.creation.default.partitions"]).toBe(String(topicPartitions));
    expect(config["transforms.sale.replacement"]).toBe(topics.sale);
    expect(config["transforms.activity.replacement"]).toBe(topics.activity);
    expect(config["transforms.heartbeat.replacement"]).toBe(topics.heartbeat);
  });

  it("the two engines' connectors differ only where the engine does", () => {
    const [mysql, mariadb] = connectorFiles.map(configOf);
    const differing = Object.keys({ ...mysql, ...mariadb }).filter((key) => mysql[key] !== mariadb[key]);
    expect(differing.sort()).toEqual(["connector.class", "database.server.id", "database.ssl.mode"]);
  });
});

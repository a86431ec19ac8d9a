import { unitsBackChannel } from "@flashgate/cache";
import { eventually, fastRedisUrl } from "@flashgate/testkit";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { createSoldOutShortcut, followUnitsBack } from "./sold-out-shortcut.ts";

describe("the sold-out shortcut hearing units come back, on Redis alone", () => {
  const publisher = new Redis(fastRedisUrl());
  afterAll(() => publisher.disconnect());

  it("is on only while subscribed, and drops a SKU whose units came back", async () => {
    const subscriber = new Redis(fastRedisUrl(), { lazyConnect: true });
    const shortcut = createSoldOutShortcut(60_000, async () => ({
      version: "v",
      buyers: new Map([["42", "key-42"]]),
    }));
    followUnitsBack(subscriber, shortcut);
    // Nothing is kept before the subscription stands.
    shortcut.soldOut(1, 2);
    await Promise.resolve();
    expect(shortcut.answer(1, 2, "7", "k7")).toBeUndefined();

    await subscriber.connect();
    await eventually(async () => {
      shortcut.soldOut(1, 2);
      await new Promise((resolve) => setImmediate(resolve));
      expect(shortcut.answer(1, 2, "7", "k7")).toBe("SOLD_OUT");
    });
    shortcut.soldOut(1, 3);
    await eventually(() => expect(shortcut.answer(1, 3, "7", "k7")).toBe("SOLD_OUT"));

    await publisher.publish(unitsBackChannel, "1:2");
    await publisher.publish(unitsBackChannel, "not a sku");
    await eventually(() => expect(shortcut.answer(1, 2, "7", "k7")).toBeUndefined());
    expect(shortcut.answer(1, 3, "7", "k7")).toBe("SOLD_OUT");

    // The connection gone, it can no longer hear: everything it knew is dropped.
    subscriber.disconnect();
    await eventually(() => expect(shortcut.answer(1, 3, "7", "k7")).toBeUndefined());
  });
});

import { topics } from "@flashgate/cdc";
import type { Kafka } from "kafkajs";
import type { DeadLetter } from "./applier.ts";

export function createDeadLetterSink(kafka: Kafka) {
  const producer = kafka.producer({ allowAutoTopicCreation: true });
  // Connected with the first letter: most runs never send one.
  let connected: Promise<void> | undefined;
  return {
    /** The original record, its coordinates and the reason, so an operator can inspect and replay it. */
    async send(letters: DeadLetter[]): Promise<void> {
      if (letters.length === 0) return;
      connected ??= producer.connect().catch((error) => {
        connected = undefined;
        throw error;
      });
      await connected;
      await producer.send({
        topic: topics.deadLetters,
        acks: -1,
        messages: letters.map(({ record, reason }) => ({
          key: record.key ?? "",
          value: record.value ?? "",
          headers: {
            reason: reason.slice(0, 1000),
            "source-topic": record.topic,
            "source-partition": String(record.partition),
            "source-offset": String(record.offset),
          },
        })),
      });
    },
    close: () => producer.disconnect(),
  };
}

export type DeadLetterSink = ReturnType<typeof createDeadLetterSink>;

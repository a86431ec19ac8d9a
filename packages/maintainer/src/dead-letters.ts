import { topics } from "@flashgate/cdc";
import { Producer as KafkaProducer, type Producer, stringSerializers } from "@platformatic/kafka";
import type { DeadLetter } from "./applier.ts";

export function createDeadLetterSink(brokers: string[]) {
  const producer: Producer<string, string, string, string> = new KafkaProducer({
    clientId: "flashgate-cache-maintainer-dlq",
    bootstrapBrokers: brokers,
    serializers: stringSerializers,
    autocreateTopics: true,
  });
  return {
    /** The original record, its coordinates and the reason, so an operator can inspect and replay it. */
    async send(letters: DeadLetter[]): Promise<void> {
      if (letters.length === 0) return;
      await producer.send({
        acks: -1,
        messages: letters.map(({ record, reason }) => ({
          topic: topics.deadLetters,
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
    close: () => producer.close(),
  };
}

export type DeadLetterSink = ReturnType<typeof createDeadLetterSink>;

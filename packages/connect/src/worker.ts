/**
 * Settings every Connect worker that runs the connector needs, whatever starts it (the local stack,
 * Kubernetes; compose's image writes the same in docker/kafka/run.sh, held equal by
 * scripts/kubernetes.int.test.ts). Connect sends a source task's
 * records one produce request at a time (max.in.flight 1, for their order), so the batch per partition
 * bounds how many events a round trip carries: 512 KB instead of the producer's 16 KB cut Connect's CPU
 * per event by 14–29 % and the lag into the topic 3.6–9.5× at p99 (bench/changes.md, entry 6).
 * The stored offset is flushed every second: the connector supervisor judges a lost position from it,
 * and an offset a minute old can name a binlog file a DBA's purge has removed while the reader is past it.
 */
export const workerSettings = {
  // Plain JSON, no schema beside each record: the maintainer reads Debezium's envelope as it is. (JSON's
  // converter adds a schema by default, and Strimzi sets the converter without turning that off.)
  "key.converter": "org.apache.kafka.connect.json.JsonConverter",
  "value.converter": "org.apache.kafka.connect.json.JsonConverter",
  "key.converter.schemas.enable": "false",
  "value.converter.schemas.enable": "false",
  "producer.batch.size": 524288,
  "offset.flush.interval.ms": 1000,
  // ${env:…} in a connector's config is resolved by the worker (no secret is stored in Kafka), and only
  // flashgate's own variables: a connector config posted to Connect may read no other of the worker's.
  "config.providers": "env",
  "config.providers.env.class": "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
  "config.providers.env.param.allowlist.pattern": "^FLASHGATE_.*",
} as const;

/**
 * The collector of every Connect worker's JVM (the local stack, compose's image, Kubernetes' jvmOptions):
 * the throughput collector, not Kafka's G1 with 20 ms pauses. Debezium allocates an object graph per
 * change and its JSON after it; with G1 the worker spent 44.9–53.6 µs of CPU per event draining a
 * binlog backlog, with ParallelGC 36.0–38.6 µs, and drained 40,011–41,475 events/s instead of
 * 26,214–33,629 (bench/changes.md, entry 9). Its pauses, tens of milliseconds, only delay a batch.
 */
export const workerGarbageCollector = "UseParallelGC";

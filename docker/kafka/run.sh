# Starts a Kafka broker (`broker`) or a Kafka Connect worker (`connect`) with the settings the native
# stack uses (packages/stack/src/components/kafka.ts, connect.ts). Any KAFKA_* (broker) or CONNECT_*
# (worker) variable overrides one property: KAFKA_LOG_RETENTION_HOURS=24 sets log.retention.hours.
set -euo pipefail

# Healthchecks (docker-compose.yml): the broker accepts connections; the worker's REST API answers 200
# (to user flashgate with REST_PASSWORD when the API asks for it).
case "${1:-}" in
healthy-broker)
  exec 3<>/dev/tcp/127.0.0.1/9092
  exit 0
  ;;
healthy-connect)
  exec 3<>/dev/tcp/127.0.0.1/8083
  authorization=""
  if [ -n "${REST_PASSWORD:-}" ]; then
    authorization="Authorization: Basic $(printf 'flashgate:%s' "$REST_PASSWORD" | base64 -w0)\r\n"
  fi
  printf "GET /connector-plugins HTTP/1.0\r\n${authorization}\r\n" >&3
  grep -q '^HTTP/1.1 200' <&3
  exit
  ;;
esac

classpath="/opt/flashgate/kafka/*"
config=/tmp/flashgate
mkdir -p "$config"

cat >"$config/log4j2.properties" <<'LOG'
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.out.ref = out
logger.connect.name = org.apache.kafka.connect.runtime.Worker
logger.connect.level = INFO
logger.debezium.name = io.debezium
logger.debezium.level = INFO
LOG

# NAME_OF_IT=value → name.of.it=value, for the variables with the given prefix.
overrides() {
  local prefix=$1
  env | { grep "^${prefix}" || true; } | { grep -v "^${prefix}HEAP=" || true; } | while IFS='=' read -r name value; do
    key=${name#"$prefix"}
    echo "$(echo "$key" | tr '[:upper:]' '[:lower:]' | sed 's/___/-/g; s/__/@/g; s/_/./g; s/@/_/g')=${value}"
  done
}

java_opts=(-Djava.awt.headless=true "-Dlog4j2.configurationFile=$config/log4j2.properties")
# The broker keeps Kafka's own collector; Connect's is @flashgate/connect's workerGarbageCollector.
broker_gc=(-XX:+UseG1GC -XX:MaxGCPauseMillis=20)
connect_gc=(-XX:+UseParallelGC)

case "${1:-broker}" in
broker)
  properties="$config/broker.properties"
  {
    echo "process.roles=broker,controller"
    echo "node.id=1"
    echo "controller.quorum.voters=1@localhost:9093"
    echo "listeners=PLAINTEXT://0.0.0.0:9092,CONTROLLER://localhost:9093"
    echo "advertised.listeners=PLAINTEXT://${KAFKA_ADVERTISED_HOST:-kafka}:9092"
    echo "controller.listener.names=CONTROLLER"
    echo "inter.broker.listener.name=PLAINTEXT"
    echo "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
    echo "log.dirs=/var/lib/kafka/logs"
    echo "num.partitions=6"
    echo "auto.create.topics.enable=true"
    echo "offsets.topic.replication.factor=1"
    echo "transaction.state.log.replication.factor=1"
    echo "transaction.state.log.min.isr=1"
    echo "share.coordinator.state.topic.replication.factor=1"
    echo "share.coordinator.state.topic.min.isr=1"
    echo "group.initial.rebalance.delay.ms=0"
    echo "log.retention.hours=72"
    echo "log.message.timestamp.type=LogAppendTime"
    overrides KAFKA_ | { grep -v '^advertised.host=' || true; }
  } >"$properties"
  if [ ! -f /var/lib/kafka/logs/meta.properties ]; then
    cluster_id=$(java -cp "$classpath" kafka.tools.StorageTool random-uuid)
    java "${java_opts[@]}" -cp "$classpath" kafka.tools.StorageTool format -t "$cluster_id" -c "$properties"
  fi
  exec java "-Xms${KAFKA_HEAP:-512m}" "-Xmx${KAFKA_HEAP:-512m}" "${broker_gc[@]}" "${java_opts[@]}" -cp "$classpath" kafka.Kafka "$properties"
  ;;
connect)
  properties="$config/connect.properties"
  {
    echo "bootstrap.servers=${FLASHGATE_KAFKA_BOOTSTRAP:-kafka:9092}"
    echo "group.id=flashgate-connect"
    echo "offset.storage.topic=flashgate-connect-offsets"
    echo "offset.storage.replication.factor=-1"
    echo "offset.storage.partitions=5"
    echo "config.storage.topic=flashgate-connect-configs"
    echo "config.storage.replication.factor=-1"
    echo "status.storage.topic=flashgate-connect-status"
    echo "status.storage.replication.factor=-1"
    # @flashgate/connect's workerSettings (packages/connect/src/worker.ts): plain JSON records; Debezium's
    # records leave one produce request at a time, and larger batches carry more per round trip; the
    # stored offset a second behind the reader at most.
    echo "key.converter=org.apache.kafka.connect.json.JsonConverter"
    echo "value.converter=org.apache.kafka.connect.json.JsonConverter"
    echo "key.converter.schemas.enable=false"
    echo "value.converter.schemas.enable=false"
    echo "producer.batch.size=524288"
    echo "offset.flush.interval.ms=1000"
    echo "listeners=http://0.0.0.0:8083"
    echo "rest.advertised.host.name=$(hostname)"
    echo "plugin.path=/opt/flashgate/plugins"
    echo "plugin.discovery=hybrid_warn"
    # A connector config posted to Connect may read flashgate's variables and no other of the worker.
    echo "config.providers=env"
    echo "config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider"
    echo "config.providers.env.param.allowlist.pattern=^FLASHGATE_.*"
    echo "topic.creation.enable=true"
    echo "scheduled.rebalance.max.delay.ms=5000"
    overrides CONNECT_
  } >"$properties"
  # REST_PASSWORD set: the REST API answers only user flashgate with it (HTTP basic authentication).
  if [ -n "${REST_PASSWORD:-}" ]; then
    (umask 077 && printf 'flashgate: %s\n' "$REST_PASSWORD" >"$config/rest-users.properties")
    printf 'KafkaConnect {\n  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n  file="%s";\n};\n' \
      "$config/rest-users.properties" >"$config/rest-jaas.conf"
    echo "rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension" >>"$properties"
    java_opts+=("-Djava.security.auth.login.config=$config/rest-jaas.conf")
  fi
  exec java "-Xms${CONNECT_HEAP:-768m}" "-Xmx${CONNECT_HEAP:-768m}" "${connect_gc[@]}" "${java_opts[@]}" -cp "$classpath" \
    org.apache.kafka.connect.cli.ConnectDistributed "$properties"
  ;;
*)
  echo "usage: run.sh broker|connect" >&2
  exit 64
  ;;
esac

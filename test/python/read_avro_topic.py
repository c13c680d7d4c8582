"""Reads Kafka topics with Confluent's Python client (librdkafka) and prints one JSON line per record.

    read_avro_topic.py BROKERS TOPIC[,TOPIC…] COUNT (avro REGISTRY_URL | json)

`avro`: values are decoded by confluent-kafka's AvroDeserializer, which reads the Confluent wire
format (magic byte, schema id) and fetches the writer's schema from the registry by that id; basic
auth from SR_USER / SR_PASSWORD (the environment, never the command line). `json`: values are
parsed as JSON text. Reads every partition from the start (assigned: no group to join) as a
read_committed consumer until COUNT records came in all (COUNT 0: to the end of every partition as
it was when the reader started), then prints {"topic", "key", "value",
"schema_id"} lines; exits 1 if fewer came within READ_TIMEOUT_S
(environment, default 60).
"""

import json
import os
import sys
import time
import uuid

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext


def main() -> int:
    brokers, topics, count, fmt = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3]), sys.argv[4]
    timeout_s = float(os.environ.get("READ_TIMEOUT_S", "60"))
    deserialize = None
    if fmt == "avro":
        conf = {"url": sys.argv[5]}
        if os.environ.get("SR_USER"):
            conf["basic.auth.user.info"] = f"{os.environ['SR_USER']}:{os.environ['SR_PASSWORD']}"
        deserialize = AvroDeserializer(SchemaRegistryClient(conf))
    consumer = Consumer(
        {
            "bootstrap.servers": brokers,
            "group.id": f"read-avro-{uuid.uuid4()}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
        }
    )
    metadata = consumer.list_topics(timeout=30)
    partitions = []
    for topic in topics:
        if topic not in metadata.topics or metadata.topics[topic].error is not None:
            raise RuntimeError(f"no topic {topic}")
        partitions += [TopicPartition(topic, p, OFFSET_BEGINNING) for p in metadata.topics[topic].partitions]
    consumer.assign(partitions)
    out = []
    # COUNT 0: read to the end offsets (the last stable ones, read_committed) of every partition.
    ends = {}
    if count == 0:
        for tp in partitions:
            low, high = consumer.get_watermark_offsets(tp, timeout=30)
            if high > low:
                ends[(tp.topic, tp.partition)] = high
    deadline = time.monotonic() + timeout_s

    def done() -> bool:
        return len(out) >= count if count > 0 else not ends

    try:
        while not done() and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    if msg.offset() >= ends.get((msg.topic(), msg.partition()), 0):
                        ends.pop((msg.topic(), msg.partition()), None)
                    continue
                raise RuntimeError(str(msg.error()))
            raw = msg.value()
            if deserialize is not None:
                value = deserialize(raw, SerializationContext(msg.topic(), MessageField.VALUE))
                schema_id = int.from_bytes(raw[1:5], "big") if raw[0] == 0 else None
            else:
                value = json.loads(raw)
                schema_id = None
            out.append({"topic": msg.topic(), "key": msg.key().decode(), "value": value, "schema_id": schema_id})
    finally:
        consumer.close()
    for r in out:
        print(json.dumps(r, sort_keys=True))
    if not done():
        print(f"read {len(out)} of {count or 'all'} records of {','.join(topics)} within {timeout_s} s", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

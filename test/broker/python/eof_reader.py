# Reads assigned partitions to their end (librdkafka's partition EOF events) for the test scripts.
import time
from confluent_kafka import Consumer

PARTITION_EOF = -191


def read_to_end(conf, partitions, timeout_s=120):
    """Values read from `partitions` (TopicPartitions) with `conf`; and whether every one reached its end."""
    c = Consumer({**conf, 'enable.partition.eof': True, 'enable.auto.commit': False})
    c.assign(partitions)
    seen, eof, deadline = [], set(), time.time() + timeout_s
    while len(eof) < len(partitions) and time.time() < deadline:
        for m in c.consume(num_messages=1000, timeout=0.5):
            if m.error():
                if m.error().code() == PARTITION_EOF:
                    eof.add(m.partition())
                    continue
                raise Exception(m.error())
            seen.append(m.value().decode())
    c.close()
    return seen, len(eof) == len(partitions)

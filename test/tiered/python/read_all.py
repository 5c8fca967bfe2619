# Reads one partition from offset 0 to its end with kafka-python or confluent-kafka-python and
# prints every record as JSON: offset, key, value, timestamp, headers. Used by the tiered-storage
# tests, where the first offsets are served from the remote tier.
#   read_all.py <kafka-python|confluent> <bootstrap> <topic> <read_uncommitted|read_committed> <end offset>
import json, sys

lib, bootstrap, topic, isolation, end = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
rows = []

def row(offset, key, value, ts, headers):
    rows.append({'o': offset, 'k': key.decode() if key is not None else None, 'v': value.decode() if value is not None else None,
                 'ts': ts, 'h': [[k, v.decode()] for k, v in (headers or [])]})

if lib == 'confluent':
    from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING
    c = Consumer({'bootstrap.servers': bootstrap, 'group.id': 'unused', 'enable.auto.commit': False, 'enable.partition.eof': True, 'isolation.level': isolation})
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    while True:
        m = c.poll(10)
        if m is None:
            raise SystemExit('no record within 10 s after offset %s' % (rows[-1]['o'] if rows else None))
        if m.error():
            if m.error().code() == -191:  # _PARTITION_EOF
                if not rows or rows[-1]['o'] + 1 >= end or isolation == 'read_committed':
                    break
                continue
            raise SystemExit(str(m.error()))
        row(m.offset(), m.key(), m.value(), m.timestamp()[1], m.headers())
    c.close()
else:
    from kafka import KafkaConsumer, TopicPartition
    # Debian's kafka-python 2.0 has no isolation_level setting (it reads uncommitted).
    extra = {} if isolation == 'read_uncommitted' else {'isolation_level': isolation}
    c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=10000, **extra)
    tp = TopicPartition(topic, 0)
    c.assign([tp])
    c.seek_to_beginning(tp)
    for m in c:
        row(m.offset, m.key, m.value, m.timestamp, m.headers)
        if m.offset + 1 >= end:
            break
    c.close()
print(json.dumps(rows))

# kafka-python as an old client: produce with a fixed api_version (no ApiVersions; (0, 9) sends
# Produce v1 with magic 0 messages, (0, 10) Produce v2 with magic 1), then read back with a
# version-negotiating consumer. Prints what the produce responses said and what came back.
import json, sys
from kafka import KafkaProducer, KafkaConsumer, TopicPartition

bootstrap, topic, version, codec, count, ts0 = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
api_version = tuple(int(x) for x in version.split('.'))
p = KafkaProducer(bootstrap_servers=bootstrap, api_version=api_version, acks='all', linger_ms=20,
                  compression_type=None if codec == 'none' else codec)
futures = []
for i in range(count):
    key = None if i % 5 == 0 else ('key-%d' % i).encode()
    value = None if i % 7 == 3 and i % 5 != 0 else ('value-%d' % i).encode()
    futures.append(p.send(topic, key=key, value=value, partition=0, timestamp_ms=ts0 + i))
p.flush()
sent = [[f.get(10).offset, f.get(10).timestamp] for f in futures]
p.close()
c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=5000, auto_offset_reset='earliest')
tp = TopicPartition(topic, 0)
c.assign([tp])
c.seek_to_beginning(tp)
rows = []
for m in c:
    rows.append([m.offset, m.key and m.key.decode(), m.value and m.value.decode(), m.timestamp, m.timestamp_type])
    if len(rows) == count:
        break
c.close()
print(json.dumps({'sent': sent, 'rows': rows}))

# confluent-kafka-python (librdkafka) against Logline: admin create, produce with each codec,
# consume by assignment, print a JSON summary.
import json, sys
from confluent_kafka import Producer, Consumer, TopicPartition, OFFSET_BEGINNING
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
admin = AdminClient({'bootstrap.servers': bootstrap})
for f in admin.create_topics([NewTopic(topic, num_partitions=6, replication_factor=1)]).values():
    f.result(10)
codecs = ['none', 'gzip', 'snappy', 'lz4', 'zstd']
sent = 0
for codec in codecs:
    p = Producer({'bootstrap.servers': bootstrap, 'compression.codec': codec, 'partitioner': 'murmur2_random', 'linger.ms': 20})
    for i in range(count):
        p.produce(topic, key=('k%d' % (i % 50)).encode(), value=('%s-%d' % (codec, i)).encode(), headers=[('h', b'v')])
        sent += 1
        if i % 1000 == 0:
            p.poll(0)
    assert p.flush(20) == 0
c = Consumer({'bootstrap.servers': bootstrap, 'group.id': 'unused', 'enable.auto.commit': False, 'enable.partition.eof': True})
c.assign([TopicPartition(topic, i, OFFSET_BEGINNING) for i in range(6)])
rows, eof = [], set()
while len(eof) < 6:
    m = c.poll(5)
    if m is None:
        break
    if m.error():
        if m.error().code() == -191:  # _PARTITION_EOF
            eof.add(m.partition())
            continue
        raise SystemExit(str(m.error()))
    rows.append({'p': m.partition(), 'o': m.offset(), 'k': m.key().decode(), 'v': m.value().decode(), 'h': [[k, v.decode()] for k, v in (m.headers() or [])], 'ts': m.timestamp()[1]})
c.close()
print(json.dumps({'codecs': codecs, 'sent': sent, 'rows': rows}))

# kafka-python against Logline: create a topic, produce keyed records with headers using each
# codec kafka-python supports here, read them back by assignment, print a JSON summary.
import json, sys
from kafka import KafkaProducer, KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

bootstrap, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id='kp-admin')
admin.create_topics([NewTopic(name=topic, num_partitions=6, replication_factor=1)])
admin.close()
codecs = [None, 'gzip']
for c in ['snappy', 'lz4', 'zstd']:
    try:
        KafkaProducer(bootstrap_servers=bootstrap, compression_type=c).close()
        codecs.append(c)
    except Exception:
        pass
sent = 0
for codec in codecs:
    p = KafkaProducer(bootstrap_servers=bootstrap, compression_type=codec, acks='all')
    for i in range(count):
        p.send(topic, key=('k%d' % (i % 50)).encode(), value=('%s-%d' % (codec, i)).encode(), headers=[('h', b'v')])
        sent += 1
    p.flush()
    p.close()
c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=3000, auto_offset_reset='earliest')
parts = [TopicPartition(topic, i) for i in range(6)]
c.assign(parts)
c.seek_to_beginning(*parts)
rows = []
for m in c:
    rows.append({'p': m.partition, 'o': m.offset, 'k': m.key.decode(), 'v': m.value.decode(), 'h': [[k, v.decode()] for k, v in m.headers], 'ts': m.timestamp})
c.close()
print(json.dumps({'codecs': [x or 'none' for x in codecs], 'sent': sent, 'rows': rows}))

# confluent-kafka-python against a 3-node cluster: the admin creates a topic through one broker,
# a producer bootstraps from another, a consumer group from the third. Prints one JSON object.
import json
import sys
import time
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

admin_bootstrap, producer_bootstrap, consumer_bootstrap, topic, count = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
admin = AdminClient({'bootstrap.servers': admin_bootstrap})  # kept: a collected client cancels its futures
admin.create_topics([NewTopic(topic, 6, 1)])[topic].result(30)

producer = Producer({'bootstrap.servers': producer_bootstrap, 'enable.idempotence': True, 'acks': 'all'})
failed = []
for i in range(count):
    producer.produce(topic, key=f'k{i % 20}'.encode(), value=f'v{i}'.encode(), on_delivery=lambda err, msg: err and failed.append(str(err)))
producer.flush(60)

consumer = Consumer({'bootstrap.servers': consumer_bootstrap, 'group.id': 'cluster-py', 'auto.offset.reset': 'earliest'})
consumer.subscribe([topic])
seen = []
deadline = time.time() + 60
while time.time() < deadline and len(seen) < count:
    m = consumer.poll(0.5)
    if m is not None and m.error() is None:
        seen.append(m.value().decode())
consumer.close()
print(json.dumps({'failed': failed, 'seen': seen}))

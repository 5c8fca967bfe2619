# confluent-kafka-python with client.rack (KIP-392): produces `count` records with acks=all, then
# a consumer in rack `rack` reads every partition from offset 0 (assigned, no group). Prints one
# JSON object: delivery failures and the (partition, offset, value) of every record read.
import json
import sys
import time
from confluent_kafka import Consumer, Producer, TopicPartition

bootstrap, topic, partitions, count, rack = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
producer = Producer({'bootstrap.servers': bootstrap, 'enable.idempotence': True, 'acks': 'all'})
failed = []
for i in range(count):
    producer.produce(topic, partition=i % partitions, value=f'v{i}'.encode(), on_delivery=lambda err, msg: err and failed.append(str(err)))
producer.flush(60)

consumer = Consumer({
    'bootstrap.servers': bootstrap, 'group.id': 'follower-fetch', 'client.id': 'rack-consumer', 'client.rack': rack,
    'enable.auto.commit': False, 'auto.offset.reset': 'earliest',
})
consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
seen = []
deadline = time.time() + 60
while time.time() < deadline and len(seen) < count:
    m = consumer.poll(0.5)
    if m is not None and m.error() is None:
        seen.append([m.partition(), m.offset(), m.value().decode()])
consumer.close()
print(json.dumps({'failed': failed, 'seen': seen}))

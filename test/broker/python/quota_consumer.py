# A librdkafka consumer that reads as fast as it can for `seconds` from the start of a topic, for
# the consumer quota test: one JSON line with the record value bytes it received in that time.
import json
import sys
import time
from confluent_kafka import Consumer

bootstrap, topic, seconds, client_id = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
consumer = Consumer({
    'bootstrap.servers': bootstrap, 'client.id': client_id, 'group.id': 'quota-consumer', 'auto.offset.reset': 'earliest',
    'enable.auto.commit': False, 'max.partition.fetch.bytes': 262144, 'fetch.max.bytes': 262144, 'message.max.bytes': 262144,
})
consumer.subscribe([topic])
received = 0
start = None
while True:
    msg = consumer.poll(0.05)
    now = time.time()
    if start is not None and now - start >= seconds:
        break
    if msg is None or msg.error():
        continue
    if start is None:
        start = now
    received += len(msg.value())
print(json.dumps({'bytes': received, 'elapsed': time.time() - start}), flush=True)
consumer.close()

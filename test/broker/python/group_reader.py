# A consumer group member (librdkafka) that subscribes to a topic from the earliest offset and reads
# until it has `expected` records or `timeout_s` passes, committing as it goes. Prints one JSON
# object: the records as [partition, offset, value] and the group's committed offsets at the end.
import json
import sys
import time
from confluent_kafka import Consumer, KafkaException

bootstrap, topic, group, expected, timeout_s = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
consumer = Consumer({'bootstrap.servers': bootstrap, 'group.id': group, 'auto.offset.reset': 'earliest', 'enable.auto.commit': True, 'auto.commit.interval.ms': 200})
consumer.subscribe([topic])
records = []
errors = []
deadline = time.time() + timeout_s
while time.time() < deadline and len(records) < expected:
    m = consumer.poll(0.5)
    if m is None:
        continue
    if m.error() is not None:
        errors.append(str(m.error()))
        continue
    records.append([m.partition(), m.offset(), m.value().decode()])
assignment = consumer.assignment()
try:
    consumer.commit(asynchronous=False)
except KafkaException:
    pass  # nothing new since the last automatic commit
committed = consumer.committed(assignment, timeout=10) if assignment else []
consumer.close()
print(json.dumps({'records': records, 'errors': errors, 'committed': {str(tp.partition): tp.offset for tp in committed}}))

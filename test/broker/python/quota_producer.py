# A librdkafka producer that sends as fast as it can for `seconds`, for the producer quota test.
# Values are `value_bytes` long. At `seconds` after its first record it reports what the broker had
# acknowledged by then and what the broker stored by then (the partition's high watermark, asked
# on a separate connection), and exits without waiting for the rest. One JSON line.
import json
import sys
import time
from confluent_kafka import Consumer, Producer, TopicPartition

bootstrap, topic, seconds, value_bytes, client_id = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
producer = Producer({
    'bootstrap.servers': bootstrap, 'client.id': client_id, 'acks': 1, 'linger.ms': 5,
    'enable.idempotence': False, 'compression.type': 'none',
    # Enough queued to always have a full batch ready, bounded so the test's memory is.
    'queue.buffering.max.kbytes': 16384, 'message.timeout.ms': 120000,
})
acked = 0


def report(err, msg):
    global acked
    if err is None:
        acked += 1


value = b'x' * value_bytes
start = time.time()
deadline = start + seconds
sent = 0
while time.time() < deadline:
    try:
        producer.produce(topic, value=value, on_delivery=report)
        sent += 1
    except BufferError:
        producer.poll(0.005)
        continue
    if sent % 100 == 0:
        producer.poll(0)
producer.poll(0)
acked_at_deadline = acked
elapsed = time.time() - start
watcher = Consumer({'bootstrap.servers': bootstrap, 'group.id': 'quota-watch', 'client.id': 'quota-watch'})
low, high = watcher.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
watcher.close()
print(json.dumps({'sent': sent, 'acked': acked_at_deadline, 'stored': high, 'elapsed': elapsed}), flush=True)
producer.purge()

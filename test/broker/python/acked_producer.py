# A steady idempotent acks=all producer (librdkafka) for fault tests: sends `rate` records a second,
# values '<prefix>-<n>' without keys (so spread over the partitions), until `stop_file` exists, then
# flushes. One JSON line per delivery report: {"p","o","v"} when acknowledged, {"e","v"} when failed;
# a last line {"done": records produced, "left": still undelivered after the flush}.
import json
import os
import sys
import time
from confluent_kafka import Producer

bootstrap, topic, prefix, rate, stop_file = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]
producer = Producer({
    'bootstrap.servers': bootstrap, 'enable.idempotence': True, 'acks': 'all', 'linger.ms': 5,
    # Long enough to outlast any failover the test causes: a record is only given up on by the
    # producer when the cluster never recovers, which the test reports as such.
    'message.timeout.ms': 180000,
})


def report(err, msg):
    if err is None:
        print(json.dumps({'p': msg.partition(), 'o': msg.offset(), 'v': msg.value().decode()}), flush=True)
    else:
        print(json.dumps({'e': f'{err.name()} fatal={err.fatal()}: {err.str()}', 'v': msg.value().decode()}), flush=True)


sent = 0
start = time.time()
while not os.path.exists(stop_file):
    due = int((time.time() - start) * rate)
    while sent < due:
        producer.produce(topic, value=f'{prefix}-{sent}'.encode(), on_delivery=report)
        sent += 1
    producer.poll(0.01)
left = producer.flush(180)
print(json.dumps({'done': sent, 'left': left}), flush=True)

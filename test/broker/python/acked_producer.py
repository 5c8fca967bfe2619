# A steady idempotent acks=all producer (librdkafka) for fault tests: sends `rate` records a second,
# values '<prefix>-<n>' without keys (so spread over the partitions), until `stop_file` exists, then
# flushes. One JSON line per delivery report: {"p","o","v"} when acknowledged, {"e","v","p","t"}
# when failed (t: when it was produced, in ms); a last line {"done": records produced, "left":
# still undelivered after the flush}. Records left are purged first, each reported as
# {"pending","p","v","t"} (p null: it never had a partition), so the test can say what was stuck
# where. With `debug_file`, librdkafka's eos/msg/queue/protocol/broker/topic debug log goes there,
# read only when a run fails.
import json
import logging
import os
import sys
import time
from confluent_kafka import Producer

bootstrap, topic, prefix, rate, stop_file = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]
debug_file = sys.argv[6] if len(sys.argv) > 6 else None
config = {
    'bootstrap.servers': bootstrap, 'enable.idempotence': True, 'acks': 'all', 'linger.ms': 5,
    # Long enough to outlast any failover the test causes: a record is only given up on by the
    # producer when the cluster never recovers, which the test reports as such.
    'message.timeout.ms': 180000,
}
if debug_file is not None:
    handler = logging.FileHandler(debug_file)
    handler.setFormatter(logging.Formatter('%(asctime)s %(message)s'))
    logger = logging.getLogger('rdkafka')
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    logger.propagate = False
    config.update({'debug': 'eos,msg,queue,protocol,broker,topic', 'logger': logger})
producer = Producer(config)
purging = False
produced_at = []  # each record's produce() time, in ms, by its number


def report(err, msg):
    if purging and err is not None:
        value = msg.value().decode()
        print(json.dumps({'pending': err.name(), 'p': msg.partition(), 'v': value, 't': produced_at[int(value.rsplit('-', 1)[1])]}), flush=True)
    elif err is None:
        print(json.dumps({'p': msg.partition(), 'o': msg.offset(), 'v': msg.value().decode()}), flush=True)
    else:
        value = msg.value().decode()
        print(json.dumps({'e': f'{err.name()} fatal={err.fatal()}: {err.str()}', 'v': value, 'p': msg.partition(), 't': produced_at[int(value.rsplit('-', 1)[1])]}), flush=True)


sent = 0
start = time.time()
while not os.path.exists(stop_file):
    due = int((time.time() - start) * rate)
    while sent < due:
        producer.produce(topic, value=f'{prefix}-{sent}'.encode(), on_delivery=report)
        produced_at.append(int(time.time() * 1000))
        sent += 1
    producer.poll(0.01)
left = producer.flush(180)
if left > 0:
    purging = True
    producer.purge(in_queue=True, in_flight=True)
    producer.flush(10)
print(json.dumps({'done': sent, 'left': left}), flush=True)

# kafka-python (Debian's python3-kafka, 2.0.2) at acks=all against a broker below its free-space
# floor: sends `count` records '<prefix>-<n>:...' of `size` bytes and waits for each; retries are
# on (kafka-python's default is none). Prints one JSON line {"acked": n, "failed": [errors]}; exit
# code 0 only when every record was acknowledged.
import json
import sys
from kafka import KafkaProducer

bootstrap, topic, prefix, count, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
producer = KafkaProducer(bootstrap_servers=bootstrap, acks='all', retries=100000, retry_backoff_ms=200,
                         max_in_flight_requests_per_connection=1, request_timeout_ms=30000)
futures = []
for n in range(count):
    key = f'{prefix}-{n}:'
    futures.append(producer.send(topic, value=(key + 'x' * (size - len(key))).encode()))
acked, failed = 0, []
for f in futures:
    try:
        f.get(timeout=150)
        acked += 1
    except Exception as e:  # noqa: BLE001 - any failure is reported
        failed.append(f'{type(e).__name__}: {e}')
producer.close(10)
print(json.dumps({'acked': acked, 'failed': failed[:5]}), flush=True)
sys.exit(0 if acked == count else 1)

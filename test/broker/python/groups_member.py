# One consumer-group member driven by the groups interop test: subscribes, processes records and
# commits after processing, printing one JSON line per event on stdout:
#   {"e": "assignment", "partitions": [...]}   its whole assignment after every change
#   {"e": "records", "items": [[partition, offset], ...]}
#   {"e": "committed"}
# It stops (committing and leaving the group) when stdin closes, or after `seconds`.
#   groups_member.py CLIENT BOOTSTRAP TOPIC GROUP SECONDS [ASSIGNOR] [INSTANCE_ID]
import json, sys, threading, time

client, bootstrap, topic, group, seconds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
assignor = sys.argv[6] if len(sys.argv) > 6 and sys.argv[6] != '-' else None
instance_id = sys.argv[7] if len(sys.argv) > 7 else None
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
deadline = time.time() + seconds
owned = set()

def say(**event):
    sys.stdout.write(json.dumps(event) + '\n')
    sys.stdout.flush()

if client == 'confluent':
    from confluent_kafka import Consumer
    conf = {'bootstrap.servers': bootstrap, 'group.id': group, 'enable.auto.commit': False, 'auto.offset.reset': 'earliest',
            'session.timeout.ms': 6000, 'heartbeat.interval.ms': 500, 'max.poll.interval.ms': 20000}
    if assignor:
        conf['partition.assignment.strategy'] = assignor
    if instance_id:
        conf['group.instance.id'] = instance_id
    c = Consumer(conf)
    cooperative = assignor == 'cooperative-sticky'

    def on_assign(consumer, partitions):
        if not cooperative:
            owned.clear()
        owned.update(p.partition for p in partitions)
        say(e='assignment', partitions=sorted(owned), added=sorted(p.partition for p in partitions))

    def on_revoke(consumer, partitions):
        if cooperative:
            owned.difference_update(p.partition for p in partitions)
        else:
            owned.clear()
        say(e='revoked', partitions=sorted(p.partition for p in partitions))

    c.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
    while not stop.is_set() and time.time() < deadline:
        msgs = c.consume(500, 0.2)
        items = [[m.partition(), m.offset()] for m in msgs if not m.error()]
        if items:
            say(e='records', items=items)
            c.commit(asynchronous=False)
            say(e='committed')
    c.close()
else:
    from kafka import KafkaConsumer, ConsumerRebalanceListener
    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False, auto_offset_reset='earliest',
                      session_timeout_ms=6000, heartbeat_interval_ms=500, max_poll_interval_ms=20000)

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked):
            owned.clear()
            say(e='revoked', partitions=sorted(p.partition for p in revoked))

        def on_partitions_assigned(self, assigned):
            owned.update(p.partition for p in assigned)
            say(e='assignment', partitions=sorted(owned), added=sorted(p.partition for p in assigned))

    c.subscribe([topic], listener=Listener())
    while not stop.is_set() and time.time() < deadline:
        batch = c.poll(timeout_ms=200, max_records=500)
        items = [[tp.partition, m.offset] for tp, ms in batch.items() for m in ms]
        if items:
            say(e='records', items=items)
            c.commit()
            say(e='committed')
    c.close()
say(e='closed')

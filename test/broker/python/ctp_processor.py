# A transactional consume-transform-produce processor (confluent-kafka-python / librdkafka), the
# shape of a Kafka Streams task with exactly-once: read a batch from the input topic
# (read_committed), write one output record per input record, commit the consumed offsets in the
# same transaction. The test SIGKILLs it at random moments and starts it again; a restart fences
# the killed incarnation (same transactional.id) and resumes from the committed offsets.
#   ctp_processor.py run BOOTSTRAP INPUT OUTPUT GROUP TXN_ID BATCH [STOP_FILE]
#                          -- BATCH records per transaction; exits 0 once the input is drained (and,
#                             with STOP_FILE, once that file exists: more input may come until then)
# A transaction that fails the way brokers dying makes it fail is handled as a Kafka Streams task
# handles it: a retriable commit is retried; an abortable one is aborted and the consumer rewound
# to the committed offsets; anything else (fenced, fatal) ends the process with exit code 3, as does
# a fatal error of the consumer.
#   ctp_processor.py read BOOTSTRAP TOPIC                      -- prints the read_committed values as JSON
import json
import os
import sys
import time
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition, OFFSET_BEGINNING
from eof_reader import read_to_end

mode, bootstrap = sys.argv[1], sys.argv[2]


def retried(what, fn, attempts=20):
    """fn(), again while it fails retriably (a transactional API call that timed out may be repeated)."""
    for i in range(attempts):
        try:
            return fn()
        except KafkaException as e:
            if not e.args[0].retriable() or i == attempts - 1:
                raise
            print(f'retrying {what}: {e.args[0]}', flush=True)
            time.sleep(0.2)


def rewind(consumer):
    """Back to the committed offsets: the aborted transaction's input is processed again."""
    for tp in consumer.committed(consumer.assignment(), timeout=30):
        consumer.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else OFFSET_BEGINNING))


def run(input_topic, output_topic, group, txn_id, batch, stop_file=None):
    batch = int(batch)
    consumer = Consumer({
        'bootstrap.servers': bootstrap, 'group.id': group, 'group.instance.id': 'processor-1',
        'isolation.level': 'read_committed', 'enable.auto.commit': False, 'auto.offset.reset': 'earliest',
        'session.timeout.ms': 6000, 'heartbeat.interval.ms': 500,
        # CTP_DEBUG=cgrp: librdkafka's group protocol trace, for a stall's post-mortem.
        **({'debug': os.environ['CTP_DEBUG']} if os.environ.get('CTP_DEBUG') else {}),
    })
    producer = Producer({'bootstrap.servers': bootstrap, 'transactional.id': txn_id, 'linger.ms': 5, 'transaction.timeout.ms': 10000})
    producer.init_transactions(30)
    consumer.subscribe([input_topic])
    idle_since = time.time()
    said_idle = time.time()
    committed = 0
    while True:
        got = consumer.consume(num_messages=batch, timeout=0.5)
        for m in got:
            if m.error():
                print(f'consume error: {m.error()}', flush=True)
                # The fatal error comes as a _FATAL event, which itself is not flagged fatal.
                if m.error().fatal() or m.error().code() == KafkaError._FATAL:
                    # The consumer is dead for good (librdkafka raises FENCED_INSTANCE_ID as fatal
                    # when, after its session timed out while the coordinator moved, it heartbeats
                    # with the member id it has just reset: librdkafka issue 3437). A Kafka Streams
                    # thread dies on a fatal error and is replaced; so is this process.
                    sys.exit(3)
        msgs = [m for m in got if not m.error()]
        if not msgs:
            assignment = consumer.assignment()
            if time.time() - said_idle > 10:
                # For a stall's post-mortem: what it holds and where it stands.
                said_idle = time.time()
                try:
                    where = [(tp.partition, tp.offset) for tp in consumer.position(assignment)] if assignment else []
                except KafkaException as e:
                    where = str(e.args[0])
                print(f'idle: assignment {[tp.partition for tp in assignment]}, positions {where}', flush=True)
            if assignment and time.time() - idle_since > 2:
                # Drained when the committed offsets (what a successor resumes from) reach the end.
                try:
                    committed = consumer.committed(assignment, timeout=10)
                    ends = [consumer.get_watermark_offsets(c, timeout=5)[1] for c in committed]
                except KafkaException as e:
                    # A coordinator or leader moving (a broker died): look again later.
                    print(f'drain check: {e.args[0]}', flush=True)
                    idle_since = time.time()
                    continue
                if all(end == 0 or c.offset >= end for c, end in zip(committed, ends)) and (stop_file is None or os.path.exists(stop_file)):
                    break
                if time.time() - said_idle < 0.1:
                    print(f'not drained: committed {[(c.partition, c.offset) for c in committed]}, ends {ends}', flush=True)
                idle_since = time.time()
            continue
        idle_since = time.time()
        producer.begin_transaction()
        try:
            for m in msgs:
                producer.produce(output_topic, key=m.key(), value=b'out-' + m.value())
            positions = consumer.position(consumer.assignment())
            retried('send_offsets_to_transaction', lambda: producer.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), 30))
            retried('commit_transaction', lambda: producer.commit_transaction(30))
        except KafkaException as e:
            if not e.args[0].txn_requires_abort():
                print(f'fatal: {e.args[0]}', flush=True)
                sys.exit(3)
            print(f'aborting: {e.args[0]}', flush=True)
            retried('abort_transaction', lambda: producer.abort_transaction(30))
            rewind(consumer)
            continue
        committed += len(msgs)
        print(f'committed {committed}', flush=True)
    consumer.close()
    print('drained', flush=True)


def read(topic):
    meta = Consumer({'bootstrap.servers': bootstrap, 'group.id': 'ctp-verify'})
    partitions = [TopicPartition(topic, p, 0) for p in meta.list_topics(topic, timeout=10).topics[topic].partitions]
    meta.close()
    conf = {'bootstrap.servers': bootstrap, 'group.id': 'ctp-verify', 'isolation.level': 'read_committed', 'auto.offset.reset': 'earliest'}
    seen, complete = read_to_end(conf, partitions)
    print(json.dumps({'values': seen, 'complete': complete}))


if mode == 'run':
    run(*sys.argv[3:])
else:
    read(sys.argv[3])

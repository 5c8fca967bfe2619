# A transactional consume-transform-produce processor (confluent-kafka-python / librdkafka), the
# shape of a Kafka Streams task with exactly-once: read a batch from the input topic
# (read_committed), write one output record per input record, commit the consumed offsets in the
# same transaction. The test SIGKILLs it at random moments and starts it again; a restart fences
# the killed incarnation (same transactional.id) and resumes from the committed offsets.
#   ctp_processor.py run BOOTSTRAP INPUT OUTPUT GROUP TXN_ID BATCH -- BATCH records per transaction;
#                                                                     exits 0 once the input is drained
#   ctp_processor.py read BOOTSTRAP TOPIC                      -- prints the read_committed values as JSON
import json
import sys
import time
from confluent_kafka import Consumer, Producer, TopicPartition
from eof_reader import read_to_end

mode, bootstrap = sys.argv[1], sys.argv[2]


def run(input_topic, output_topic, group, txn_id, batch):
    batch = int(batch)
    consumer = Consumer({
        'bootstrap.servers': bootstrap, 'group.id': group, 'group.instance.id': 'processor-1',
        'isolation.level': 'read_committed', 'enable.auto.commit': False, 'auto.offset.reset': 'earliest',
        'session.timeout.ms': 6000, 'heartbeat.interval.ms': 500,
    })
    producer = Producer({'bootstrap.servers': bootstrap, 'transactional.id': txn_id, 'linger.ms': 5, 'transaction.timeout.ms': 10000})
    producer.init_transactions(30)
    consumer.subscribe([input_topic])
    idle_since = time.time()
    committed = 0
    while True:
        msgs = [m for m in consumer.consume(num_messages=batch, timeout=0.5) if not m.error()]
        if not msgs:
            assignment = consumer.assignment()
            if assignment and time.time() - idle_since > 2:
                # Drained when the committed offsets (what a successor resumes from) reach the end.
                committed = consumer.committed(assignment, timeout=10)
                ends = [consumer.get_watermark_offsets(c, timeout=5)[1] for c in committed]
                if all(end == 0 or c.offset >= end for c, end in zip(committed, ends)):
                    break
                idle_since = time.time()
            continue
        idle_since = time.time()
        producer.begin_transaction()
        for m in msgs:
            producer.produce(output_topic, key=m.key(), value=b'out-' + m.value())
        producer.send_offsets_to_transaction(consumer.position(consumer.assignment()), consumer.consumer_group_metadata(), 30)
        producer.commit_transaction(30)
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
    run(*sys.argv[3:8])
else:
    read(sys.argv[3])

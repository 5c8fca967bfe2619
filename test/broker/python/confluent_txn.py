# confluent-kafka-python (librdkafka) transactions against the broker: commits, an abort, and a
# transaction left open while read_committed and read_uncommitted consumers read everything.
# Prints one JSON object: what each isolation level saw.
import json
import sys
from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from eof_reader import read_to_end

bootstrap, topic = sys.argv[1], sys.argv[2]
admin = AdminClient({'bootstrap.servers': bootstrap})
for f in admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)]).values():
    f.result(30)

producer = Producer({'bootstrap.servers': bootstrap, 'transactional.id': 'py-txn', 'linger.ms': 5})
producer.init_transactions(30)


def txn(prefix, n, end):
    producer.begin_transaction()
    for i in range(n):
        producer.produce(topic, key=f'k{i % 10}', value=f'{prefix}-{i}')
    producer.flush(30)
    if end == 'commit':
        producer.commit_transaction(30)
    elif end == 'abort':
        producer.abort_transaction(30)


txn('c', 100, 'commit')
txn('a', 100, 'abort')
txn('d', 50, 'commit')
txn('o', 20, 'open')  # flushed, neither committed nor aborted yet


def read_all(isolation, group):
    conf = {'bootstrap.servers': bootstrap, 'group.id': group, 'auto.offset.reset': 'earliest', 'isolation.level': isolation}
    return read_to_end(conf, [TopicPartition(topic, 0), TopicPartition(topic, 1)], timeout_s=30)


committed_open, eof1 = read_all('read_committed', 'g-rc-1')
uncommitted, eof2 = read_all('read_uncommitted', 'g-ru')
producer.commit_transaction(30)
committed_after, eof3 = read_all('read_committed', 'g-rc-2')
print(json.dumps({'committedWhileOpen': committed_open, 'uncommitted': uncommitted, 'committedAfter': committed_after, 'eof': [eof1, eof2, eof3]}))

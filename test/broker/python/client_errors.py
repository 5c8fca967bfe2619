# What librdkafka (confluent-kafka-python) reports for records the broker refuses: keyless records
# in a batch sent to a compacted topic (INVALID_RECORD for the batch), and a
# topic name Kafka refuses (INVALID_TOPIC_EXCEPTION, failed at once rather than at the timeout).
# Prints one JSON object.
import json
import sys
import time
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap = sys.argv[1]
admin = AdminClient({'bootstrap.servers': bootstrap})
admin.create_topics([NewTopic('compacted', 1, 1, config={'cleanup.policy': 'compact'})])['compacted'].result(30)

reports = []

def on_delivery(err, msg):
    reports.append({'key': None if msg.key() is None else msg.key().decode(), 'topic': msg.topic(),
                    'error': None if err is None else err.name(), 'reason': None if err is None else err.str(),
                    'offset': msg.offset(), 'at': time.time()})

producer = Producer({'bootstrap.servers': bootstrap, 'linger.ms': 200, 'message.timeout.ms': 30000, 'retries': 2})
for key in ['a', None, 'b']:
    producer.produce('compacted', key=key, value=b'v', partition=0, on_delivery=on_delivery)
producer.flush(40)
start = time.time()
producer.produce('bad$name!', value=b'v', on_delivery=on_delivery)
producer.flush(40)
consumer = Consumer({'bootstrap.servers': bootstrap, 'group.id': 'client-errors'})
low, high = consumer.get_watermark_offsets(TopicPartition('compacted', 0), timeout=10)
consumer.close()
print(json.dumps({'reports': reports, 'invalidTopicSeconds': reports[-1]['at'] - start if len(reports) == 4 else None,
                  'written': high - low}))

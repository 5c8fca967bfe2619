# Internal topics as Python clients see them: kafka-python's admin reports __consumer_offsets and
# __transaction_state as internal and user topics as not, and its classic-protocol consumer with a
# pattern subscription (.*) is assigned user topics only, because it leaves out what the broker
# marks internal (exclude_internal_topics, on by default as in the Java client). Prints one JSON
# object. (librdkafka's classic pattern subscriptions do not look at is_internal, against Apache
# Kafka too; its KIP-848 regex subscriptions are resolved by the group coordinator.)
import json
import sys
import time
from confluent_kafka import Producer
from kafka import ConsumerRebalanceListener, KafkaConsumer
from kafka.admin import KafkaAdminClient

bootstrap = sys.argv[1]
names = ['__consumer_offsets', '__transaction_state', 'user-a', 'user-b']

admin = KafkaAdminClient(bootstrap_servers=bootstrap)
listed = sorted(admin.list_topics())
described = {t['topic']: {'is_internal': t['is_internal'], 'error_code': t['error_code']} for t in admin.describe_topics(names)}
admin.close()

producer = Producer({'bootstrap.servers': bootstrap})
for topic in ['user-a', 'user-b']:
    producer.produce(topic, key=b'k', value=topic.encode())
producer.flush(30)

class Listener(ConsumerRebalanceListener):
    def on_partitions_revoked(self, revoked):
        pass

    def on_partitions_assigned(self, partitions):
        for p in partitions:
            assigned.add(p.topic)

assigned = set()
consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id='everything', auto_offset_reset='earliest',
                         metadata_max_age_ms=1000, consumer_timeout_ms=1000)
consumer.subscribe(pattern='.*', listener=Listener())
values = set()
deadline = time.time() + 60
while time.time() < deadline and len(values) < 2:
    for m in consumer.poll(timeout_ms=500).values():
        for r in m:
            values.add(r.value.decode('utf-8', 'replace'))
consumer.close()
print(json.dumps({'listed': listed, 'described': described, 'assigned': sorted(assigned), 'values': sorted(values)}))

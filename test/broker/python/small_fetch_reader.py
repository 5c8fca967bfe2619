# Reads every record of a topic with a fetch.max.bytes smaller than two of its records, with
# confluent-kafka-python (librdkafka) or kafka-python, and prints each record's partition, offset
# and value size as JSON. Used by test/broker/fetch-limits-clients.test.ts.
import json, sys, time

client, bootstrap, topic, partitions, expected = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
ca = sys.argv[6] if len(sys.argv) > 6 and sys.argv[6] else None  # an SSL listener's CA certificate
rows, deadline = [], time.time() + 60

if client == 'confluent':
    from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING
    tls = {'security.protocol': 'SSL', 'ssl.ca.location': ca} if ca else {}
    c = Consumer({
        **tls, 'bootstrap.servers': bootstrap, 'group.id': 'small-fetch-confluent', 'client.id': 'small-fetch-confluent', 'enable.auto.commit': False,
        # librdkafka wants receive.message.max.bytes at least 512 above fetch.max.bytes.
        'fetch.max.bytes': 1000000, 'receive.message.max.bytes': 1000512, 'max.partition.fetch.bytes': 20000000,
    })
    c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    while len(rows) < expected and time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            print(json.dumps({'error': str(m.error())}), file=sys.stderr)
            continue
        rows.append({'p': m.partition(), 'o': m.offset(), 'n': len(m.value())})
    c.close()
else:
    from kafka import KafkaConsumer, TopicPartition
    tls = {'security_protocol': 'SSL', 'ssl_cafile': ca} if ca else {}
    c = KafkaConsumer(**tls, bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset='earliest',
                      fetch_max_bytes=1000000, max_partition_fetch_bytes=20000000, client_id='small-fetch-kafka-python')
    parts = [TopicPartition(topic, p) for p in range(partitions)]
    c.assign(parts)
    c.seek_to_beginning(*parts)
    while len(rows) < expected and time.time() < deadline:
        for tp, msgs in c.poll(timeout_ms=500).items():
            for m in msgs:
                rows.append({'p': m.partition, 'o': m.offset, 'n': len(m.value)})
    c.close()
print(json.dumps({'rows': rows}))

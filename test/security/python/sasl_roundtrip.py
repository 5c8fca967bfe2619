# A Python client over SASL_SSL (or mTLS): admin create_topics, produce, consume in a group; prints JSON.
# argv: lib (confluent|kafka-python) bootstrap mechanism user password cafile topic count
# With mechanism mTLS, user and password are the client's certificate and key files.
import json, sys, time

lib, bootstrap, mechanism, user, password, cafile, topic, count = sys.argv[1:9]
count = int(count)
values = ['v%d' % i for i in range(count)]

if lib == 'confluent':
    from confluent_kafka import Producer, Consumer
    from confluent_kafka.admin import AdminClient, NewTopic
    if mechanism == 'mTLS':
        conf = {'bootstrap.servers': bootstrap, 'security.protocol': 'SSL', 'ssl.ca.location': cafile,
                'ssl.certificate.location': user, 'ssl.key.location': password}
    else:
        conf = {'bootstrap.servers': bootstrap, 'security.protocol': 'SASL_SSL', 'sasl.mechanism': mechanism,
                'sasl.username': user, 'sasl.password': password, 'ssl.ca.location': cafile}
    admin = AdminClient(conf)
    for f in admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)]).values():
        f.result(15)
    p = Producer(conf)
    for i, v in enumerate(values):
        p.produce(topic, key=('k%d' % i).encode(), value=v.encode())
    assert p.flush(20) == 0
    c = Consumer({**conf, 'group.id': 'sasl-py-confluent', 'auto.offset.reset': 'earliest'})
    c.subscribe([topic])
    got, deadline = [], time.time() + 30
    while len(got) < count and time.time() < deadline:
        m = c.poll(1)
        if m is None or m.error():
            continue
        got.append(m.value().decode())
    c.commit(asynchronous=False)
    c.close()
else:
    from kafka import KafkaProducer, KafkaConsumer
    from kafka.admin import KafkaAdminClient, NewTopic
    if mechanism == 'mTLS':
        conf = dict(bootstrap_servers=bootstrap, security_protocol='SSL', ssl_cafile=cafile, ssl_certfile=user,
                    ssl_keyfile=password, ssl_check_hostname=False)
    else:
        conf = dict(bootstrap_servers=bootstrap, security_protocol='SASL_SSL', sasl_mechanism=mechanism,
                    sasl_plain_username=user, sasl_plain_password=password, ssl_cafile=cafile, ssl_check_hostname=False)
    admin = KafkaAdminClient(**conf)
    admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])
    admin.close()
    p = KafkaProducer(acks='all', **conf)
    for i, v in enumerate(values):
        p.send(topic, key=('k%d' % i).encode(), value=v.encode())
    p.flush(20)
    p.close()
    c = KafkaConsumer(topic, group_id='sasl-py-kafka', auto_offset_reset='earliest', consumer_timeout_ms=20000, **conf)
    got = []
    for m in c:
        got.append(m.value.decode())
        if len(got) >= count:
            break
    c.commit()
    c.close()
print(json.dumps({'values': sorted(got, key=lambda v: int(v[1:]))}))

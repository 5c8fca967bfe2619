"""confluent-kafka-python's SchemaRegistryClient with its JSON Schema and Protobuf serializers
against Logline: register through the serializer, produce, consume, decode. Prints one JSON line:
{"json": [...], "protobuf": [...], "ids": {...}, "subjects": [...]}.
Usage: registry_roundtrip.py BOOTSTRAP REGISTRY_URL"""
import json
import sys

from confluent_kafka import DeserializingConsumer, SerializingProducer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import StringSerializer
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

bootstrap, url = sys.argv[1], sys.argv[2]
client = SchemaRegistryClient({"url": url})

SCHEMA = json.dumps({"$schema": "http://json-schema.org/draft-07/schema#", "title": "Order", "type": "object",
                     "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}, "required": ["sku"]})


def order_class():
    """A Protobuf message class built at run time (no protoc here): package logline.test, message Order."""
    fdp = descriptor_pb2.FileDescriptorProto(name="order.proto", package="logline.test", syntax="proto3")
    m = fdp.message_type.add(name="Order")
    m.field.add(name="sku", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING, label=1)
    m.field.add(name="qty", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_INT64, label=1)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName("logline.test.Order"))


def roundtrip(topic, serializer, deserializer, values):
    producer = SerializingProducer({"bootstrap.servers": bootstrap, "key.serializer": StringSerializer("utf_8"), "value.serializer": serializer})
    for i, v in enumerate(values):
        producer.produce(topic, key=str(i), value=v)
    producer.flush(30)
    consumer = DeserializingConsumer({"bootstrap.servers": bootstrap, "group.id": "g-" + topic, "auto.offset.reset": "earliest",
                                      "value.deserializer": deserializer})
    consumer.subscribe([topic])
    out = []
    for _ in range(300):
        msg = consumer.poll(0.2)
        if msg is None or msg.error():
            if len(out) == len(values):
                break
            continue
        out.append(msg.value())
        if len(out) == len(values):
            break
    consumer.close()
    return out


json_rows = roundtrip("py-orders", JSONSerializer(SCHEMA, client, lambda o, ctx: o), JSONDeserializer(SCHEMA, lambda d, ctx: d),
                      [{"sku": "a", "qty": 1}, {"sku": "b", "qty": 2}])
Order = order_class()
proto_rows = roundtrip("py-proto-orders", ProtobufSerializer(Order, client), ProtobufDeserializer(Order),
                       [Order(sku="c", qty=3), Order(sku="d", qty=4)])
latest = {s: client.get_latest_version(s).schema_id for s in ("py-orders-value", "py-proto-orders-value")}
print(json.dumps({
    "json": json_rows,
    "protobuf": [{"sku": o.sku, "qty": o.qty} for o in proto_rows],
    "ids": latest,
    "subjects": sorted(client.get_subjects()),
}))

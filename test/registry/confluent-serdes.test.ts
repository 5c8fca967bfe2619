// Confluent's own JavaScript serdes (@confluentinc/schemaregistry) against Logline: each
// serializer registers its schema through the registry's REST door (autoRegisterSchemas), the
// bytes go through a Logline broker with kafkajs and come back, and the deserializer decodes them
// with the schema it fetches by id. Avro, JSON Schema and Protobuf, on a topic with broker-side
// validation on, so the broker also checks each id against the topic's subject.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import {
  SchemaRegistryClient, SerdeType, AvroSerializer, AvroDeserializer, JsonSerializer, JsonDeserializer, ProtobufSerializer, ProtobufDeserializer,
} from '@confluentinc/schemaregistry';
// The Protobuf serdes take @bufbuild/protobuf messages (a dependency of @confluentinc/schemaregistry);
// the message type is built from a FileDescriptorProto rather than generated code.
import { create, createFileRegistry } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, FieldDescriptorProto_Type, FieldDescriptorProto_Label } from '@bufbuild/protobuf/wkt';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';

let server: ServerHandle;
let kafka: Kafka;

before(async () => {
  const config = parseBrokerConfig({ 'node.id': '1', 'schema.registry.listener': '127.0.0.1:0', 'http.listener': '' });
  server = await startServer({ config, listeners: ['PLAINTEXT://127.0.0.1:0'], schemaRegistry: true });
  const l = server.listeners[0]!;
  kafka = new Kafka({ brokers: [`${l.host}:${l.port}`], clientId: 'confluent-serdes', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: ['avro-orders', 'json-orders', 'proto-orders'].map((topic) => ({ topic, configEntries: [{ name: 'confluent.value.schema.validation', value: 'true' }] })),
  });
  await admin.disconnect();
});
after(async () => { await server.close(); });

const client = () => new SchemaRegistryClient({ baseURLs: [server.schemaRegistryUrl!], cacheCapacity: 100 });

/** Produces `value`, consumes it back from the beginning. */
async function roundTrip(topic: string, value: Buffer): Promise<Buffer> {
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, messages: [{ value }] });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: `g-${topic}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const got = await new Promise<Buffer>((resolve) => { void consumer.run({ eachMessage: async ({ message }) => resolve(message.value!) }); });
  await consumer.disconnect();
  return got;
}

test('Avro: AvroSerializer registers, kafkajs carries, AvroDeserializer decodes', async () => {
  const schema = { type: 'record', name: 'Order', namespace: 'shop', fields: [{ name: 'id', type: 'long' }, { name: 'item', type: 'string' }, { name: 'qty', type: 'int' }] };
  // Registered first: without a schema, the serializer would infer one from the object.
  const registered = await client().register('avro-orders-value', { schema: JSON.stringify(schema) });
  const ser = new AvroSerializer(client(), SerdeType.VALUE, { useLatestVersion: true });
  const order = { id: 42, item: 'book', qty: 3 };
  const bytes = await ser.serialize('avro-orders', order);
  assert.equal(bytes[0], 0);
  const id = bytes.readInt32BE(1);
  assert.equal(id, registered);
  const back = await new AvroDeserializer(client(), SerdeType.VALUE, {}).deserialize('avro-orders', await roundTrip('avro-orders', bytes));
  assert.deepEqual({ ...back }, order);
  // The schema the serializer registered, as the registry stores it.
  assert.deepEqual(JSON.parse((await client().getBySubjectAndId('avro-orders-value', id)).schema), schema);
});

test('JSON Schema: JsonSerializer registers and validates, JsonDeserializer decodes', async () => {
  const schema = { $schema: 'http://json-schema.org/draft-07/schema#', title: 'Order', type: 'object', properties: { id: { type: 'integer' }, item: { type: 'string' } }, required: ['id'] };
  const c = client();
  await c.register('json-orders-value', { schemaType: 'JSON', schema: JSON.stringify(schema) });
  const ser = new JsonSerializer(c, SerdeType.VALUE, { useLatestVersion: true, validate: true });
  const order = { id: 7, item: 'pen' };
  const bytes = await ser.serialize('json-orders', order);
  await assert.rejects(ser.serialize('json-orders', { item: 'no id' }));
  const back = await new JsonDeserializer(client(), SerdeType.VALUE, {}).deserialize('json-orders', await roundTrip('json-orders', bytes));
  assert.deepEqual(back, order);
});

test('Protobuf: ProtobufSerializer registers the .proto, ProtobufDeserializer decodes', async () => {
  const file = create(FileDescriptorProtoSchema, {
    name: 'shop/order.proto', package: 'shop', syntax: 'proto3',
    messageType: [{
      name: 'Order',
      field: [
        { name: 'id', number: 1, type: FieldDescriptorProto_Type.INT64, label: FieldDescriptorProto_Label.OPTIONAL, jsonName: 'id' },
        { name: 'item', number: 2, type: FieldDescriptorProto_Type.STRING, label: FieldDescriptorProto_Label.OPTIONAL, jsonName: 'item' },
        { name: 'tags', number: 3, type: FieldDescriptorProto_Type.STRING, label: FieldDescriptorProto_Label.REPEATED, jsonName: 'tags' },
      ],
    }],
  });
  const OrderSchema = createFileRegistry(file, () => undefined).getMessage('shop.Order')!;
  const ser = new ProtobufSerializer(client(), SerdeType.VALUE, { autoRegisterSchemas: true });
  ser.registry.add(OrderSchema);
  const order = create(OrderSchema, { id: 5n, item: 'lamp', tags: ['a', 'b'] } as never);
  const bytes = await ser.serialize('proto-orders', order);
  const registered = await client().getLatestSchemaMetadata('proto-orders-value');
  assert.equal(registered.schemaType, 'PROTOBUF');
  assert.match(registered.schema!, /message Order/);
  const deser = new ProtobufDeserializer(client(), SerdeType.VALUE, {});
  const back = await deser.deserialize('proto-orders', await roundTrip('proto-orders', bytes)) as Record<string, unknown>;
  assert.equal(back.id, 5n);
  assert.equal(back.item, 'lamp');
  assert.deepEqual(back.tags, ['a', 'b']);
});

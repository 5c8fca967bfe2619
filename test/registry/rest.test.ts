// The schema registry on one node through its REST door: @kafkajs/confluent-schema-registry
// registers Avro, JSON Schema and Protobuf schemas, kafkajs produces the encoded records through
// Logline and consumes them back, and the client decodes them with the ids it finds in them. Then
// the errors: each with Confluent's status and error code, and the stored data unchanged.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { limits } from '../../src/util/index.js';

let server: ServerHandle;
let url: string;
let bootstrap: string;

before(async () => {
  const config = parseBrokerConfig({ 'node.id': '1', 'schema.registry.listener': '127.0.0.1:0', 'http.listener': '' });
  server = await startServer({ config, listeners: ['PLAINTEXT://127.0.0.1:0'], schemaRegistry: true });
  url = server.schemaRegistryUrl!;
  const l = server.listeners[0]!;
  bootstrap = `${l.host}:${l.port}`;
});
after(async () => { await server.close(); });

const CT = 'application/vnd.schemaregistry.v1+json';
async function call(method: string, path: string, body?: unknown, raw?: string): Promise<{ status: number; json: any; type: string | null }> {
  const res = await fetch(`${url}${path}`, { method, headers: { 'content-type': CT }, ...(body !== undefined || raw !== undefined ? { body: raw ?? JSON.stringify(body) } : {}) });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null, type: res.headers.get('content-type') };
}

async function roundTrip(topic: string, encode: () => Promise<Buffer>, registry: SchemaRegistry): Promise<unknown> {
  const kafka = new Kafka({ brokers: [bootstrap], clientId: 'registry-test', logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, messages: [{ value: await encode() }] });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: `g-${topic}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const value = await new Promise<Buffer>((resolve) => { void consumer.run({ eachMessage: async ({ message }) => resolve(message.value!) }); });
  await consumer.disconnect();
  return registry.decode(value);
}

test('kafkajs schema registry client: Avro register, produce, consume, decode', async () => {
  const registry = new SchemaRegistry({ host: url });
  const schema = { type: 'record', name: 'User', namespace: 'com.example', fields: [{ name: 'id', type: 'long' }, { name: 'name', type: 'string' }] };
  const { id } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(schema) }, { subject: 'users-value' });
  assert.equal(id, 1);
  assert.equal((await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(schema) }, { subject: 'users-value' })).id, 1);
  assert.equal(await registry.getLatestSchemaId('users-value'), 1);
  const decoded = await roundTrip('users', () => registry.encode(id, { id: 7, name: 'ada' }), new SchemaRegistry({ host: url }));
  assert.deepEqual({ ...(decoded as object) }, { id: 7, name: 'ada' });
  // An evolution with a default is BACKWARD compatible; one without is refused (409).
  const v2 = { ...schema, fields: [...schema.fields, { name: 'email', type: 'string', default: '' }] };
  assert.equal((await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(v2) }, { subject: 'users-value' })).id, 2);
  const bad = { ...schema, fields: [...schema.fields, { name: 'age', type: 'int' }] };
  await assert.rejects(registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(bad) }, { subject: 'users-value' }), /incompatible/);
});

test('kafkajs schema registry client: JSON Schema register, produce, consume, decode', async () => {
  const registry = new SchemaRegistry({ host: url });
  const schema = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer' } }, required: ['sku'] };
  const { id } = await registry.register({ type: SchemaType.JSON, schema: JSON.stringify(schema) }, { subject: 'orders-value' });
  const decoded = await roundTrip('orders', () => registry.encode(id, { sku: 'a-1', qty: 3 }), new SchemaRegistry({ host: url }));
  assert.deepEqual({ ...(decoded as object) }, { sku: 'a-1', qty: 3 });
  const got = await call('GET', `/schemas/ids/${id}`);
  assert.equal(got.json.schemaType, 'JSON');
});

test('kafkajs schema registry client: Protobuf register, produce, consume, decode', async () => {
  const registry = new SchemaRegistry({ host: url });
  const schema = 'syntax = "proto3";\npackage com.example;\n\nmessage Payment {\n  string id = 1;\n  double amount = 2;\n}\n';
  const { id } = await registry.register({ type: SchemaType.PROTOBUF, schema }, { subject: 'payments-value' });
  const decoded = await roundTrip('payments', () => registry.encode(id, { id: 'p1', amount: 9.5 }), new SchemaRegistry({ host: url })) as { id: string; amount: number };
  assert.equal(decoded.id, 'p1');
  assert.equal(decoded.amount, 9.5);
});

test('REST: paths, ids shared across subjects, versions, lookup, referencedby, config and mode', async () => {
  const schema = JSON.stringify({ type: 'record', name: 'Shared', fields: [{ name: 'a', type: 'int' }] });
  const a = await call('POST', '/subjects/shared-a/versions', { schema });
  const b = await call('POST', '/subjects/shared-b/versions', { schema });
  assert.equal(a.status, 200);
  assert.equal(a.type, CT);
  assert.equal(a.json.id, b.json.id);
  assert.deepEqual((await call('GET', `/schemas/ids/${a.json.id}/subjects`)).json, ['shared-a', 'shared-b']);
  assert.deepEqual((await call('GET', `/schemas/ids/${a.json.id}/versions`)).json, [{ subject: 'shared-a', version: 1 }, { subject: 'shared-b', version: 1 }]);
  assert.deepEqual((await call('GET', '/schemas/types')).json, ['JSON', 'PROTOBUF', 'AVRO']);
  assert.deepEqual((await call('GET', '/subjects?subjectPrefix=shared-')).json, ['shared-a', 'shared-b']);
  const latest = await call('GET', '/subjects/shared-a/versions/latest');
  assert.deepEqual(latest.json, { subject: 'shared-a', version: 1, id: a.json.id, schema: '{"type":"record","name":"Shared","fields":[{"name":"a","type":"int"}]}' });
  assert.equal((await call('GET', '/subjects/shared-a/versions/1/schema')).json.type, 'record');
  assert.equal((await call('POST', '/subjects/shared-a', { schema })).json.version, 1);
  assert.deepEqual((await call('GET', '/subjects/shared-a/versions/1/referencedby')).json, []);
  // References: a schema naming Shared from subject shared-a version 1.
  const user = JSON.stringify({ type: 'record', name: 'Holder', fields: [{ name: 's', type: 'Shared' }] });
  const h = await call('POST', '/subjects/holder/versions', { schema: user, references: [{ name: 'Shared', subject: 'shared-a', version: 1 }] });
  assert.equal(h.status, 200, JSON.stringify(h.json));
  assert.deepEqual((await call('GET', '/subjects/shared-a/versions/1/referencedby')).json, [h.json.id]);
  assert.equal((await call('GET', `/schemas/ids/${h.json.id}`)).json.references[0].subject, 'shared-a');
  // Config and mode.
  assert.deepEqual((await call('GET', '/config')).json, { compatibilityLevel: 'BACKWARD' });
  assert.deepEqual((await call('PUT', '/config/shared-a', { compatibility: 'FULL' })).json, { compatibility: 'FULL' });
  assert.deepEqual((await call('GET', '/config/shared-a')).json, { compatibilityLevel: 'FULL' });
  assert.equal((await call('GET', '/config/shared-b')).json.error_code, 40408);
  assert.deepEqual((await call('GET', '/config/shared-b?defaultToGlobal=true')).json, { compatibilityLevel: 'BACKWARD' });
  const verbose = await call('POST', '/compatibility/subjects/shared-a/versions/latest?verbose=true', { schema: JSON.stringify({ type: 'record', name: 'Shared', fields: [{ name: 'a', type: 'string' }] }) });
  assert.equal(verbose.json.is_compatible, false);
  assert.ok(verbose.json.messages.some((m: string) => m.includes('TYPE_MISMATCH')));
  assert.deepEqual((await call('GET', '/mode')).json, { mode: 'READWRITE' });
});

test('REST errors: right status and error code, stored data unchanged', async () => {
  const before = (await call('GET', '/subjects')).json;
  const cases: [string, string, unknown, number, number, string?][] = [
    ['POST', '/subjects/e/versions', undefined, 400, 400, '{not json'],
    ['POST', '/subjects/e/versions', { schema: '{"type":"nope"}' }, 422, 42201],
    ['POST', '/subjects/e/versions', { schema: 'syntax = "proto3"; message {', schemaType: 'PROTOBUF' }, 422, 42201],
    ['POST', '/subjects/e/versions', { schema: '{}', schemaType: 'XML' }, 422, 42201],
    ['GET', '/subjects/nope/versions', undefined, 404, 40401],
    ['GET', '/subjects/shared-a/versions/9', undefined, 404, 40402],
    ['GET', '/subjects/shared-a/versions/zero', undefined, 422, 42202],
    ['GET', '/schemas/ids/9999', undefined, 404, 40403],
    ['PUT', '/config', { compatibility: 'SIDEWAYS' }, 422, 42203],
    ['PUT', '/mode', { mode: 'SIDEWAYS' }, 422, 42204],
    ['POST', '/subjects/shared-a', { schema: JSON.stringify({ type: 'record', name: 'Other', fields: [] }) }, 404, 40403],
    ['DELETE', '/subjects/shared-b?permanent=true', undefined, 404, 40405],
    ['GET', '/no/such/path', undefined, 404, 404],
    ['PATCH', '/subjects', undefined, 405, 405],
  ];
  for (const [method, path, body, status, code, raw] of cases) {
    const r = await call(method, path, body, raw);
    assert.equal(r.status, status, `${method} ${path}: ${JSON.stringify(r.json)}`);
    assert.equal(r.json.error_code, code, `${method} ${path}: ${JSON.stringify(r.json)}`);
    assert.equal(typeof r.json.message, 'string');
  }
  const big = await call('POST', '/subjects/e/versions', undefined, JSON.stringify({ schema: 'x'.repeat(limits.registryRequestBytesMax + 1) }));
  assert.equal(big.status, 413);
  // READONLY refuses writes; a soft-deleted subject answers 40401, then 40404 on a second soft delete.
  assert.equal((await call('PUT', '/mode/shared-b', { mode: 'READONLY' })).status, 200);
  const ro = await call('POST', '/subjects/shared-b/versions', { schema: JSON.stringify({ type: 'record', name: 'Shared', fields: [{ name: 'a', type: 'int' }, { name: 'b', type: 'int', default: 0 }] }) });
  assert.equal(ro.json.error_code, 42205);
  assert.equal((await call('DELETE', '/mode/shared-b')).status, 200);
  assert.deepEqual((await call('DELETE', '/subjects/shared-b')).json, [1]);
  assert.equal((await call('GET', '/subjects/shared-b/versions')).json.error_code, 40401);
  assert.equal((await call('DELETE', '/subjects/shared-b')).json.error_code, 40404);
  assert.deepEqual((await call('GET', '/subjects/shared-b/versions?deleted=true')).json, [1]);
  assert.deepEqual((await call('DELETE', '/subjects/shared-b?permanent=true')).json, [1]);
  const after = (await call('GET', '/subjects')).json;
  assert.deepEqual(after, before.filter((s: string) => s !== 'shared-b'));
});

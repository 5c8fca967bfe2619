// Avro evolutions, each with the answer Confluent's registry gives at BACKWARD, FORWARD and FULL
// (the plain levels; the transitive ones are in test/registry/compatibility.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AvroSchema, SchemaParseError, parseSchema } from '../../../src/registry/formats/index.js';
import { compatibilityMessages, type CompatibilityLevel } from '../../../src/registry/compatibility.js';

const record = (fields: object[], extra: object = {}) => JSON.stringify({ type: 'record', name: 'User', namespace: 'com.example', fields, ...extra });
const id = { name: 'id', type: 'long' };

interface Row { name: string; old: string; next: string; BACKWARD: boolean; FORWARD: boolean; FULL: boolean; reason?: string }
const rows: Row[] = [
  { name: 'add a field with a default', old: record([id]), next: record([id, { name: 'email', type: 'string', default: '' }]), BACKWARD: true, FORWARD: true, FULL: true },
  { name: 'add a field without a default', old: record([id]), next: record([id, { name: 'email', type: 'string' }]), BACKWARD: false, FORWARD: true, FULL: false, reason: 'READER_FIELD_MISSING_DEFAULT_VALUE' },
  { name: 'remove a field that had a default', old: record([id, { name: 'email', type: 'string', default: '' }]), next: record([id]), BACKWARD: true, FORWARD: true, FULL: true },
  { name: 'remove a field without a default', old: record([id, { name: 'email', type: 'string' }]), next: record([id]), BACKWARD: true, FORWARD: false, FULL: false, reason: 'READER_FIELD_MISSING_DEFAULT_VALUE' },
  { name: 'rename a field with an alias', old: record([id, { name: 'mail', type: 'string' }]), next: record([id, { name: 'email', type: 'string', aliases: ['mail'] }]), BACKWARD: true, FORWARD: false, FULL: false },
  { name: 'rename a field without an alias', old: record([id, { name: 'mail', type: 'string' }]), next: record([id, { name: 'email', type: 'string' }]), BACKWARD: false, FORWARD: false, FULL: false },
  { name: 'widen int to long', old: record([{ name: 'n', type: 'int' }]), next: record([{ name: 'n', type: 'long' }]), BACKWARD: true, FORWARD: false, FULL: false, reason: 'TYPE_MISMATCH' },
  { name: 'widen float to double', old: record([{ name: 'n', type: 'float' }]), next: record([{ name: 'n', type: 'double' }]), BACKWARD: true, FORWARD: false, FULL: false },
  { name: 'string to bytes and back', old: record([{ name: 'n', type: 'string' }]), next: record([{ name: 'n', type: 'bytes' }]), BACKWARD: true, FORWARD: true, FULL: true },
  { name: 'change string to int', old: record([{ name: 'n', type: 'string' }]), next: record([{ name: 'n', type: 'int' }]), BACKWARD: false, FORWARD: false, FULL: false, reason: 'TYPE_MISMATCH' },
  {
    name: 'add an enum symbol', old: record([{ name: 'c', type: { type: 'enum', name: 'Color', symbols: ['RED', 'GREEN'] } }]),
    next: record([{ name: 'c', type: { type: 'enum', name: 'Color', symbols: ['RED', 'GREEN', 'BLUE'] } }]), BACKWARD: true, FORWARD: false, FULL: false, reason: 'MISSING_ENUM_SYMBOLS',
  },
  {
    name: 'remove an enum symbol', old: record([{ name: 'c', type: { type: 'enum', name: 'Color', symbols: ['RED', 'GREEN'] } }]),
    next: record([{ name: 'c', type: { type: 'enum', name: 'Color', symbols: ['RED'] } }]), BACKWARD: false, FORWARD: true, FULL: false, reason: 'MISSING_ENUM_SYMBOLS',
  },
  {
    name: 'add an enum symbol when the enum has a default', old: record([{ name: 'c', type: { type: 'enum', name: 'Color', symbols: ['RED', 'GREEN'], default: 'RED' } }]),
    next: record([{ name: 'c', type: { type: 'enum', name: 'Color', symbols: ['RED', 'GREEN', 'BLUE'], default: 'RED' } }]), BACKWARD: true, FORWARD: true, FULL: true,
  },
  {
    name: 'nested record gains a field without a default', old: record([{ name: 'a', type: { type: 'record', name: 'Address', fields: [{ name: 'city', type: 'string' }] } }]),
    next: record([{ name: 'a', type: { type: 'record', name: 'Address', fields: [{ name: 'city', type: 'string' }, { name: 'zip', type: 'string' }] } }]),
    BACKWARD: false, FORWARD: true, FULL: false, reason: 'READER_FIELD_MISSING_DEFAULT_VALUE',
  },
  {
    name: 'nested record gains a field with a default', old: record([{ name: 'a', type: { type: 'record', name: 'Address', fields: [{ name: 'city', type: 'string' }] } }]),
    next: record([{ name: 'a', type: { type: 'record', name: 'Address', fields: [{ name: 'city', type: 'string' }, { name: 'zip', type: ['null', 'string'], default: null }] } }]),
    BACKWARD: true, FORWARD: true, FULL: true,
  },
  { name: 'add a union branch', old: record([{ name: 'v', type: ['null', 'string'] }]), next: record([{ name: 'v', type: ['null', 'string', 'int'] }]), BACKWARD: true, FORWARD: false, FULL: false, reason: 'MISSING_UNION_BRANCH' },
  { name: 'remove a union branch', old: record([{ name: 'v', type: ['null', 'string', 'int'] }]), next: record([{ name: 'v', type: ['null', 'string'] }]), BACKWARD: false, FORWARD: true, FULL: false, reason: 'MISSING_UNION_BRANCH' },
  { name: 'make a field optional (union with null)', old: record([{ name: 'v', type: 'string' }]), next: record([{ name: 'v', type: ['null', 'string'], default: null }]), BACKWARD: true, FORWARD: false, FULL: false },
  { name: 'rename the record', old: record([id]), next: JSON.stringify({ type: 'record', name: 'Person', namespace: 'com.example', fields: [id] }), BACKWARD: false, FORWARD: false, FULL: false, reason: 'NAME_MISMATCH' },
  { name: 'rename the record with an alias', old: record([id]), next: JSON.stringify({ type: 'record', name: 'Person', namespace: 'com.example', aliases: ['User'], fields: [id] }), BACKWARD: true, FORWARD: false, FULL: false },
  {
    name: 'change a fixed size', old: record([{ name: 'h', type: { type: 'fixed', name: 'Hash', size: 16 } }]), next: record([{ name: 'h', type: { type: 'fixed', name: 'Hash', size: 32 } }]),
    BACKWARD: false, FORWARD: false, FULL: false, reason: 'FIXED_SIZE_MISMATCH',
  },
  { name: 'array items widen', old: record([{ name: 'xs', type: { type: 'array', items: 'int' } }]), next: record([{ name: 'xs', type: { type: 'array', items: 'long' } }]), BACKWARD: true, FORWARD: false, FULL: false },
  { name: 'map values change', old: record([{ name: 'm', type: { type: 'map', values: 'int' } }]), next: record([{ name: 'm', type: { type: 'map', values: 'string' } }]), BACKWARD: false, FORWARD: false, FULL: false },
];

for (const row of rows) {
  test(`avro: ${row.name}`, () => {
    const old = AvroSchema.parse(row.old);
    const next = AvroSchema.parse(row.next);
    for (const level of ['BACKWARD', 'FORWARD', 'FULL'] as CompatibilityLevel[]) {
      const messages = compatibilityMessages(level, next, [{ version: 1, schema: old }]);
      assert.equal(messages.length === 0, row[level as 'BACKWARD'], `${level}: ${messages.join('\n')}`);
      assert.deepEqual(compatibilityMessages('NONE', next, [{ version: 1, schema: old }]), []);
    }
    if (row.reason) {
      const all = [...compatibilityMessages('FULL', next, [{ version: 1, schema: old }])].join('\n');
      assert.match(all, new RegExp(`errorType:'${row.reason}'`));
    }
  });
}

test('avro: a recursive record is compatible with itself and its evolutions terminate', () => {
  const list = (extra: object[]) => JSON.stringify({ type: 'record', name: 'Node', fields: [{ name: 'value', type: 'int' }, { name: 'next', type: ['null', 'Node'], default: null }, ...extra] });
  const a = AvroSchema.parse(list([]));
  const b = AvroSchema.parse(list([{ name: 'tag', type: 'string', default: '' }]));
  assert.deepEqual(b.backwardIncompatibilities(a), []);
  assert.deepEqual(a.backwardIncompatibilities(b), []);
});

test('avro: canonical form is compact, keeps what matters, and is the same for two spellings', () => {
  const a = AvroSchema.parse('{ "type" : "record", "name": "User", "namespace": "com.example", "fields": [ {"name": "id", "type": {"type": "long"}} ] }');
  const b = AvroSchema.parse('{"namespace":"com.example","name":"User","type":"record","fields":[{"type":"long","name":"id"}]}');
  assert.equal(a.canonical, '{"type":"record","name":"User","namespace":"com.example","fields":[{"name":"id","type":"long"}]}');
  assert.equal(a.canonical, b.canonical);
  assert.equal(AvroSchema.parse('"string"').canonical, '"string"');
  // Normalized: names fully qualified.
  assert.equal(a.normalized(), '{"type":"record","name":"com.example.User","fields":[{"name":"id","type":"long"}]}');
});

test('avro: invalid schemas are refused with SchemaParseError', () => {
  for (const bad of ['{', '{"type":"record","name":"X"}', '{"type":"nope"}', '{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":"x"}]}', '{"type":"enum","name":"E","symbols":["A","A"]}']) {
    assert.throws(() => parseSchema('AVRO', bad), SchemaParseError, bad);
  }
});

test('avro: a reference brings its named types into scope', () => {
  const address = { name: 'com.example.Address', schemaType: 'AVRO' as const, schema: JSON.stringify({ type: 'record', name: 'Address', namespace: 'com.example', fields: [{ name: 'city', type: 'string' }] }), references: [] };
  const user = AvroSchema.parse(record([id, { name: 'home', type: 'Address' }]), [address]);
  assert.match(user.canonical, /"type":"Address"/);
  assert.throws(() => AvroSchema.parse(record([id, { name: 'home', type: 'Address' }])), SchemaParseError);
});

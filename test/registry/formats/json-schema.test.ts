// JSON Schema evolutions with Confluent's answers at BACKWARD, FORWARD and FULL: required,
// properties, and open, closed and partially open content models (additionalProperties).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JsonSchema, SchemaParseError } from '../../../src/registry/formats/index.js';
import { compatibilityMessages, type CompatibilityLevel } from '../../../src/registry/compatibility.js';

const object = (properties: object, extra: object = {}) => JSON.stringify({ type: 'object', properties, ...extra });
const closed = { additionalProperties: false };

interface Row { name: string; old: string; next: string; BACKWARD: boolean; FORWARD: boolean; FULL: boolean; reason?: string }
const rows: Row[] = [
  { name: 'add a property to an open model', old: object({ a: { type: 'string' } }), next: object({ a: { type: 'string' }, b: { type: 'integer' } }), BACKWARD: false, FORWARD: true, FULL: false, reason: 'PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL' },
  { name: 'add a property to a closed model', old: object({ a: { type: 'string' } }, closed), next: object({ a: { type: 'string' }, b: { type: 'integer' } }, closed), BACKWARD: true, FORWARD: false, FULL: false, reason: 'PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL' },
  { name: 'remove a property from an open model', old: object({ a: { type: 'string' }, b: { type: 'integer' } }), next: object({ a: { type: 'string' } }), BACKWARD: true, FORWARD: false, FULL: false },
  { name: 'remove a property from a closed model', old: object({ a: { type: 'string' }, b: { type: 'integer' } }, closed), next: object({ a: { type: 'string' } }, closed), BACKWARD: false, FORWARD: true, FULL: false, reason: 'PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL' },
  { name: 'add a property with an empty schema to an open model', old: object({ a: { type: 'string' } }), next: object({ a: { type: 'string' }, b: {} }), BACKWARD: true, FORWARD: true, FULL: true },
  { name: 'add a required property to a closed model', old: object({ a: { type: 'string' } }, closed), next: object({ a: { type: 'string' }, b: { type: 'string' } }, { ...closed, required: ['b'] }), BACKWARD: false, FORWARD: false, FULL: false, reason: 'REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL' },
  { name: 'add a required property with a default to a closed model', old: object({ a: { type: 'string' } }, closed), next: object({ a: { type: 'string' }, b: { type: 'string', default: 'x' } }, { ...closed, required: ['b'] }), BACKWARD: true, FORWARD: false, FULL: false },
  { name: 'make a property required', old: object({ a: { type: 'string' } }), next: object({ a: { type: 'string' } }, { required: ['a'] }), BACKWARD: false, FORWARD: true, FULL: false, reason: 'REQUIRED_ATTRIBUTE_ADDED' },
  { name: 'make a property optional', old: object({ a: { type: 'string' } }, { required: ['a'] }), next: object({ a: { type: 'string' } }), BACKWARD: true, FORWARD: false, FULL: false },
  { name: 'close an open model', old: object({ a: { type: 'string' } }), next: object({ a: { type: 'string' } }, closed), BACKWARD: false, FORWARD: true, FULL: false, reason: 'ADDITIONAL_PROPERTIES_REMOVED' },
  { name: 'open a closed model', old: object({ a: { type: 'string' } }, closed), next: object({ a: { type: 'string' } }), BACKWARD: true, FORWARD: false, FULL: false },
  {
    name: 'add a property covered by a partially open model', old: object({ a: { type: 'string' } }, { additionalProperties: { type: 'string' } }),
    next: object({ a: { type: 'string' }, b: { type: 'string' } }, { additionalProperties: { type: 'string' } }), BACKWARD: true, FORWARD: true, FULL: true,
  },
  {
    name: 'add a property not covered by a partially open model', old: object({ a: { type: 'string' } }, { additionalProperties: { type: 'string' } }),
    next: object({ a: { type: 'string' }, b: { type: 'integer' } }, { additionalProperties: { type: 'string' } }), BACKWARD: false, FORWARD: false, FULL: false, reason: 'PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL',
  },
  { name: 'change a property type', old: object({ a: { type: 'string' } }), next: object({ a: { type: 'integer' } }), BACKWARD: false, FORWARD: false, FULL: false, reason: 'TYPE_CHANGED' },
  { name: 'widen integer to number', old: object({ a: { type: 'integer' } }), next: object({ a: { type: 'number' } }), BACKWARD: true, FORWARD: false, FULL: false, reason: 'TYPE_NARROWED' },
  { name: 'raise maxLength', old: object({ a: { type: 'string', maxLength: 5 } }), next: object({ a: { type: 'string', maxLength: 10 } }), BACKWARD: true, FORWARD: false, FULL: false },
  { name: 'extend an enum', old: object({ a: { enum: ['x', 'y'] } }), next: object({ a: { enum: ['x', 'y', 'z'] } }), BACKWARD: true, FORWARD: false, FULL: false, reason: 'ENUM_ARRAY_NARROWED' },
  { name: 'a property becomes a union containing it', old: object({ a: { type: 'string' } }), next: object({ a: { oneOf: [{ type: 'string' }, { type: 'integer' }] } }), BACKWARD: true, FORWARD: false, FULL: false },
  { name: 'nested object gains a property (open)', old: object({ n: { type: 'object', properties: { x: { type: 'string' } } } }), next: object({ n: { type: 'object', properties: { x: { type: 'string' }, y: { type: 'string' } } } }), BACKWARD: false, FORWARD: true, FULL: false },
  { name: 'change a description only', old: object({ a: { type: 'string', description: 'one' } }), next: object({ a: { type: 'string', description: 'two' } }), BACKWARD: true, FORWARD: true, FULL: true },
  { name: 'array items change type', old: object({ xs: { type: 'array', items: { type: 'string' } } }), next: object({ xs: { type: 'array', items: { type: 'integer' } } }), BACKWARD: false, FORWARD: false, FULL: false },
];

for (const row of rows) {
  test(`json schema: ${row.name}`, () => {
    const old = JsonSchema.parse(row.old);
    const next = JsonSchema.parse(row.next);
    for (const level of ['BACKWARD', 'FORWARD', 'FULL'] as CompatibilityLevel[]) {
      const messages = compatibilityMessages(level, next, [{ version: 1, schema: old }]);
      assert.equal(messages.length === 0, row[level as 'BACKWARD'], `${level}: ${messages.join('\n')}`);
    }
    if (row.reason) assert.match(compatibilityMessages('FULL', next, [{ version: 1, schema: old }]).join('\n'), new RegExp(`errorType:'${row.reason}'`));
  });
}

test('json schema: $ref into definitions and into a reference are followed', () => {
  const withDefs = (t: string) => JSON.stringify({ type: 'object', properties: { a: { $ref: '#/definitions/A' } }, definitions: { A: { type: t } } });
  assert.notDeepEqual(JsonSchema.parse(withDefs('integer')).backwardIncompatibilities(JsonSchema.parse(withDefs('string'))), []);
  assert.deepEqual(JsonSchema.parse(withDefs('string')).backwardIncompatibilities(JsonSchema.parse(withDefs('string'))), []);
  const ref = { name: 'address.json', schemaType: 'JSON' as const, schema: JSON.stringify({ type: 'object', properties: { city: { type: 'string' } } }), references: [] };
  const s = JsonSchema.parse(object({ home: { $ref: 'address.json' } }), [ref]);
  assert.deepEqual(s.backwardIncompatibilities(s), []);
});

test('json schema: drafts 4, 7, 2019-09 and 2020-12 parse; invalid schemas are refused', () => {
  for (const draft of ['http://json-schema.org/draft-04/schema#', 'http://json-schema.org/draft-07/schema#', 'https://json-schema.org/draft/2019-09/schema', 'https://json-schema.org/draft/2020-12/schema']) {
    JsonSchema.parse(JSON.stringify({ $schema: draft, type: 'object', properties: { a: { type: 'string' } } }));
  }
  for (const bad of ['{', '"x"', '[]', '{"type":"nope"}', '{"type":"object","properties":{"a":{"minLength":-1}}}']) assert.throws(() => JsonSchema.parse(bad), SchemaParseError, bad);
});

test('json schema: normalized form orders keys', () => {
  assert.equal(JsonSchema.parse('{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"string"}}}').normalized(),
    '{"properties":{"a":{"type":"string"},"b":{"type":"string"}},"type":"object"}');
});

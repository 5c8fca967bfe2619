// Protobuf evolutions with Confluent's answers: field numbers, types grouped by wire encoding,
// oneofs, enums, removed fields and reserved numbers, packages, imports as references.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProtobufSchema, SchemaParseError } from '../../../src/registry/formats/index.js';
import { compatibilityMessages, type CompatibilityLevel } from '../../../src/registry/compatibility.js';

const proto = (body: string, pkg = 'com.example') => `syntax = "proto3";\npackage ${pkg};\n\nmessage User {\n${body}\n}\n`;

interface Row { name: string; old: string; next: string; BACKWARD: boolean; FORWARD: boolean; FULL: boolean; reason?: string }
const rows: Row[] = [
  { name: 'add a field', old: proto('int64 id = 1;'), next: proto('int64 id = 1; string email = 2;'), BACKWARD: true, FORWARD: true, FULL: true },
  { name: 'remove a field', old: proto('int64 id = 1; string email = 2;'), next: proto('int64 id = 1;'), BACKWARD: true, FORWARD: true, FULL: true },
  { name: 'rename a field (same number)', old: proto('string mail = 2;'), next: proto('string email = 2;'), BACKWARD: true, FORWARD: true, FULL: true },
  { name: 'renumber a field', old: proto('string email = 2;'), next: proto('string email = 3;'), BACKWARD: true, FORWARD: true, FULL: true },
  { name: 'int32 to int64 (same encoding group)', old: proto('int32 n = 1;'), next: proto('int64 n = 1;'), BACKWARD: true, FORWARD: true, FULL: true },
  { name: 'int32 to sint32 (zigzag differs)', old: proto('int32 n = 1;'), next: proto('sint32 n = 1;'), BACKWARD: false, FORWARD: false, FULL: false, reason: 'FIELD_SCALAR_KIND_CHANGED' },
  { name: 'string to bytes', old: proto('string s = 1;'), next: proto('bytes s = 1;'), BACKWARD: true, FORWARD: true, FULL: true },
  { name: 'string to int32', old: proto('string s = 1;'), next: proto('int32 s = 1;'), BACKWARD: false, FORWARD: false, FULL: false, reason: 'FIELD_SCALAR_KIND_CHANGED' },
  { name: 'scalar to message', old: proto('string s = 1;'), next: proto('Other s = 1; message Other { string v = 1; }'), BACKWARD: false, FORWARD: false, FULL: false, reason: 'FIELD_KIND_CHANGED' },
  { name: 'enum to int32', old: proto('Color c = 1; enum Color { RED = 0; }'), next: proto('int32 c = 1; enum Color { RED = 0; }'), BACKWARD: true, FORWARD: true, FULL: true },
  { name: 'add an enum value', old: proto('Color c = 1; enum Color { RED = 0; }'), next: proto('Color c = 1; enum Color { RED = 0; BLUE = 1; }'), BACKWARD: true, FORWARD: true, FULL: true },
  { name: 'move a field into a new oneof', old: proto('string a = 1; int32 b = 2;'), next: proto('int32 b = 2; oneof choice { string a = 1; }'), BACKWARD: true, FORWARD: true, FULL: true },
  { name: 'move two fields into one oneof', old: proto('string a = 1; int32 b = 2;'), next: proto('oneof choice { string a = 1; int32 b = 2; }'), BACKWARD: false, FORWARD: true, FULL: false, reason: 'MULTIPLE_FIELDS_MOVED_TO_ONEOF' },
  { name: 'remove a field from a oneof', old: proto('oneof choice { string a = 1; int32 b = 2; }'), next: proto('oneof choice { string a = 1; }'), BACKWARD: false, FORWARD: true, FULL: false, reason: 'ONEOF_FIELD_REMOVED' },
  { name: 'change the package', old: proto('int64 id = 1;'), next: proto('int64 id = 1;', 'com.other'), BACKWARD: false, FORWARD: false, FULL: false, reason: 'PACKAGE_CHANGED' },
  { name: 'reuse a reserved number', old: proto('reserved 2; int64 id = 1;'), next: proto('reserved 3; int64 id = 1; string email = 2;'), BACKWARD: false, FORWARD: false, FULL: false, reason: 'FIELD_NUMBER_RESERVED_IN_ORIGINAL' },
  { name: 'reserve the number of a removed field', old: proto('int64 id = 1; string email = 2;'), next: proto('reserved 2; int64 id = 1;'), BACKWARD: true, FORWARD: false, FULL: false },
  { name: 'nested message changes a field type', old: proto('Address a = 1; message Address { string city = 1; }'), next: proto('Address a = 1; message Address { int32 city = 1; }'), BACKWARD: false, FORWARD: false, FULL: false, reason: 'FIELD_SCALAR_KIND_CHANGED' },
  { name: 'repeated int32 to singular', old: proto('repeated int32 xs = 1;'), next: proto('int32 xs = 1;'), BACKWARD: false, FORWARD: false, FULL: false, reason: 'FIELD_NUMERIC_LABEL_CHANGED' },
  // Confluent counts a removed message as incompatible, so a message added is not FORWARD compatible.
  { name: 'add a message', old: proto('int64 id = 1;'), next: `${proto('int64 id = 1;')}message Extra { string x = 1; }\n`, BACKWARD: true, FORWARD: false, FULL: false, reason: 'MESSAGE_REMOVED' },
];

for (const row of rows) {
  test(`protobuf: ${row.name}`, () => {
    const old = ProtobufSchema.parse(row.old);
    const next = ProtobufSchema.parse(row.next);
    for (const level of ['BACKWARD', 'FORWARD', 'FULL'] as CompatibilityLevel[]) {
      const messages = compatibilityMessages(level, next, [{ version: 1, schema: old }]);
      assert.equal(messages.length === 0, row[level as 'BACKWARD'], `${level}: ${messages.join('\n')}`);
    }
    if (row.reason) assert.match(compatibilityMessages('FULL', next, [{ version: 1, schema: old }]).join('\n'), new RegExp(`errorType:'${row.reason}'`));
  });
}

test('protobuf: the canonical form drops comments and layout, and is stable', () => {
  const a = ProtobufSchema.parse('syntax = "proto3";\n// a comment\npackage p;\nmessage M {   int32 a = 1;\n  map<string, int64> m = 2; optional string o = 3; oneof k { string x = 4; } }');
  assert.equal(a.canonical, 'syntax = "proto3";\npackage p;\nmessage M {\n  int32 a = 1;\n  map<string, int64> m = 2;\n  optional string o = 3;\n  oneof k {\n    string x = 4;\n  }\n}\n');
  assert.equal(ProtobufSchema.parse(a.canonical).canonical, a.canonical);
});

test('protobuf: an import needs a reference, and resolves through it', () => {
  const text = 'syntax = "proto3";\npackage p;\nimport "address.proto";\nmessage User { Address home = 1; }';
  assert.throws(() => ProtobufSchema.parse(text), SchemaParseError);
  const ref = { name: 'address.proto', schemaType: 'PROTOBUF' as const, schema: 'syntax = "proto3";\npackage p;\nmessage Address { string city = 1; }', references: [] };
  const s = ProtobufSchema.parse(text, [ref]);
  assert.doesNotMatch(s.canonical, /message Address/);
  // Well-known types need none.
  ProtobufSchema.parse('syntax = "proto3";\nimport "google/protobuf/timestamp.proto";\nmessage E { google.protobuf.Timestamp at = 1; }');
});

test('protobuf: a base64 FileDescriptorProto (confluent-kafka-python) reads as its .proto text', async () => {
  const { default: descriptor } = await import('protobufjs/ext/descriptor/index.js');
  const bytes = descriptor.FileDescriptorProto.encode({ name: 'user.proto', package: 'p', syntax: 'proto3', messageType: [{ name: 'User', field: [{ name: 'id', number: 1, label: 1, type: 3 }] }] } as never).finish();
  const s = ProtobufSchema.parse(Buffer.from(bytes).toString('base64'));
  assert.equal(s.canonical, 'syntax = "proto3";\npackage p;\nmessage User {\n  int64 id = 1;\n}\n');
});

test('protobuf: invalid files are refused', () => {
  for (const bad of ['syntax = "proto3"; message {', 'message M { Unknown u = 1; }', 'not a proto at all!']) assert.throws(() => ProtobufSchema.parse(bad), SchemaParseError, bad);
});

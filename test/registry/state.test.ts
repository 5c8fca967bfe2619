// The registry state machine through its operations, with every record going through the
// `_schemas` serde and `replay`, as the service does: ids, versions, deletes, configs, modes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  RegistryState, RegistryError, register, deleteVersion, deleteSubject, setConfig, setMode, deleteConfig, encodeRegistryRecord, decodeRegistryRecord,
  type OperationResult, type SchemaRequest,
} from '../../src/registry/index.js';

function apply<T>(state: RegistryState, result: OperationResult<T>): T {
  for (const r of result.records) {
    const { key, value } = encodeRegistryRecord(r);
    state.replay(decodeRegistryRecord(key, value)!);
  }
  return result.response;
}
const avro = (fields: object[]): SchemaRequest => ({ schemaType: 'AVRO', references: [], schema: JSON.stringify({ type: 'record', name: 'R', fields }) });
const v1 = avro([{ name: 'a', type: 'int' }]);
const v2 = avro([{ name: 'a', type: 'int' }, { name: 'b', type: 'string', default: '' }]);
const code = (fn: () => unknown) => { try { fn(); } catch (e) { if (e instanceof RegistryError) return e.errorCode; throw e; } return 0; };

test('the same schema under two subjects gets one id; a new one the next id; re-registering changes nothing', () => {
  const s = new RegistryState();
  assert.deepEqual(apply(s, register(s, 'a-value', v1, false)), { id: 1 });
  assert.deepEqual(apply(s, register(s, 'b-value', v1, false)), { id: 1 });
  assert.deepEqual(register(s, 'a-value', v1, false), { records: [], response: { id: 1 } });
  assert.deepEqual(apply(s, register(s, 'a-value', v2, false)), { id: 2 });
  assert.deepEqual(s.versionsOf('a-value', false).map((v) => [v.version, v.id]), [[1, 1], [2, 2]]);
  assert.deepEqual(s.usagesOfId(1, false), [{ subject: 'a-value', version: 1 }, { subject: 'b-value', version: 1 }]);
});

test('an incompatible schema is refused with 409 and nothing is written', () => {
  const s = new RegistryState();
  apply(s, register(s, 't', v1, false));
  assert.equal(code(() => register(s, 't', avro([{ name: 'a', type: 'string' }]), false)), 409);
  apply(s, setConfig(s, 't', 'none'));
  assert.deepEqual(apply(s, register(s, 't', avro([{ name: 'a', type: 'string' }]), false)), { id: 2 });
  assert.equal(code(() => setConfig(s, null, 'SIDEWAYS')), 42203);
  assert.deepEqual(apply(s, deleteConfig(s, 't')), { compatibilityLevel: 'NONE' });
  assert.equal(s.effectiveConfig('t'), 'BACKWARD');
});

test('soft delete, then permanent delete; ids are never reused after a permanent delete', () => {
  const s = new RegistryState();
  apply(s, register(s, 't', v1, false));
  apply(s, register(s, 't', v2, false));
  assert.equal(code(() => deleteSubject(s, 't', true)), 40405);
  assert.deepEqual(apply(s, deleteSubject(s, 't', false)), [1, 2]);
  assert.equal(code(() => s.versionsOf('t', false)), 40401);
  assert.equal(code(() => deleteSubject(s, 't', false)), 40404);
  assert.deepEqual(s.listSubjects('', true), ['t']);
  assert.deepEqual(apply(s, deleteSubject(s, 't', true)), [1, 2]);
  assert.deepEqual(s.listSubjects('', true), []);
  assert.equal(code(() => s.schemaById(2)), 40403);
  // A new schema after the permanent delete: id 3, version 1 again.
  const v3 = avro([{ name: 'z', type: 'long' }]);
  assert.deepEqual(apply(s, register(s, 't', v3, false)), { id: 3 });
  assert.equal(s.version('t', -1, false).version, 1);
});

test('a version: soft delete, 40406 twice, permanent only after soft; a referenced version cannot go', () => {
  const s = new RegistryState();
  apply(s, register(s, 'addr', avro([{ name: 'city', type: 'string' }]), false));
  const user: SchemaRequest = { schemaType: 'AVRO', schema: JSON.stringify({ type: 'record', name: 'U', fields: [{ name: 'home', type: 'R' }] }), references: [{ name: 'R', subject: 'addr', version: 1 }] };
  assert.deepEqual(apply(s, register(s, 'user', user, false)), { id: 2 });
  assert.deepEqual(s.referencedBy('addr', 1), [2]);
  assert.equal(code(() => deleteVersion(s, 'addr', 1, false)), 42206);
  assert.equal(code(() => deleteVersion(s, 'user', 1, true)), 40407);
  assert.equal(apply(s, deleteVersion(s, 'user', 1, false)), 1);
  assert.equal(code(() => deleteVersion(s, 'user', 1, false)), 40406);
  assert.equal(apply(s, deleteVersion(s, 'addr', 1, false)), 1);
  assert.equal(code(() => register(s, 'x', { ...user, references: [{ name: 'R', subject: 'nope', version: 1 }] }, false)), 42201);
});

test('READONLY refuses writes with 42205; IMPORT takes the caller\'s id and version', () => {
  const s = new RegistryState();
  apply(s, setMode(s, null, 'READONLY', false));
  assert.equal(code(() => register(s, 't', v1, false)), 42205);
  assert.equal(code(() => setMode(s, null, 'SIDEWAYS', false)), 42204);
  apply(s, setMode(s, null, 'IMPORT', false));
  assert.deepEqual(apply(s, register(s, 't', { ...v1, id: 100, version: 7 }, false)), { id: 100 });
  assert.equal(s.version('t', 7, false).id, 100);
  assert.equal(code(() => register(s, 'u', { ...v2, id: 100 }, false)), 42205);
  apply(s, setMode(s, null, 'READWRITE', false));
  assert.deepEqual(apply(s, register(s, 'u', v2, false)), { id: 101 });
  assert.equal(code(() => setMode(s, null, 'IMPORT', false)), 42205);
});

test('an unknown or unreadable record is skipped', () => {
  assert.equal(decodeRegistryRecord(Buffer.from('{"keytype":"CONTEXT","magic":0}'), null), null);
  assert.equal(decodeRegistryRecord(Buffer.from('not json'), null), null);
  assert.deepEqual(decodeRegistryRecord(Buffer.from('{"keytype":"SCHEMA","subject":"s","version":1,"magic":1}'), null), { keytype: 'SCHEMA', subject: 's', version: 1, value: null });
});

// The transitive levels: a third version checked against the latest only, or against all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AvroSchema, compatibilityMessages, type CompatibilityLevel } from '../../src/registry/index.js';

const rec = (fields: object[]) => AvroSchema.parse(JSON.stringify({ type: 'record', name: 'R', fields }));
// v1 {a}, v2 {a, b=0}, v3 {b}: v3 reads v2's data (b is there) but not v1's (b missing, no
// default); v2 cannot read v3's data (a missing, no default), so every FORWARD flavour refuses.
const v1 = rec([{ name: 'a', type: 'int' }]);
const v2 = rec([{ name: 'a', type: 'int' }, { name: 'b', type: 'int', default: 0 }]);
const v3 = rec([{ name: 'b', type: 'int' }]);
const previous = [{ version: 1, schema: v1 }, { version: 2, schema: v2 }];

const cases: [CompatibilityLevel, boolean][] = [
  ['NONE', true], ['BACKWARD', true], ['BACKWARD_TRANSITIVE', false], ['FORWARD', false], ['FORWARD_TRANSITIVE', false], ['FULL', false], ['FULL_TRANSITIVE', false],
];
for (const [level, ok] of cases) {
  test(`${level}: {b} after {a} and {a, b=0} is ${ok ? 'accepted' : 'refused'}`, () => {
    const messages = compatibilityMessages(level, v3, previous);
    assert.equal(messages.length === 0, ok, messages.join('\n'));
    // Transitive checks go newest first: BACKWARD_TRANSITIVE passes version 2 and fails on version 1.
    if (level === 'BACKWARD_TRANSITIVE') assert.ok(messages.includes('{oldSchemaVersion: 1}'), messages.join('\n'));
  });
}

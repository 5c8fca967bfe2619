import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BigintOffset } from '../../src/replication/partition.js';

test('property: a cached bigint offset always equals BigInt of the latest number, whatever the sequence', () => {
  fc.assert(fc.property(fc.array(fc.oneof(fc.integer({ min: -1, max: 1000 }), fc.maxSafeInteger()), { maxLength: 50 }), (offsets) => {
    const cached = new BigintOffset();
    for (const n of offsets) assert.equal(cached.of(n), BigInt(n));
  }));
});

// Property: any valid broker config written as server.properties text reads back to the same values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseBrokerConfig, parseProperties, serializeProperties } from '../../src/config/index.js';

const settings = fc.record({
  'num.partitions': fc.integer({ min: 1, max: 10_000 }).map(String),
  'log.retention.ms': fc.oneof(fc.constant('-1'), fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }).map(String)),
  'log.cleanup.policy': fc.subarray(['compact', 'delete'], { minLength: 1 }).map((l) => l.join(',')),
  'compression.type': fc.constantFrom('uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'),
  'log.cleaner.min.cleanable.ratio': fc.double({ min: 0, max: 1, noNaN: true }).map(String),
  'broker.rack': fc.string({ maxLength: 10 }).map((s) => s.trim()),
  'auto.create.topics.enable': fc.boolean().map(String),
  'log.dir': fc.string({ minLength: 1, maxLength: 20, unit: 'binary' }).filter((s) => s.trim() !== '' && !s.includes(',')),
}, { requiredKeys: [] });

test('a valid broker config survives properties text unchanged', () => {
  fc.assert(fc.property(settings, (props) => {
    const map = new Map(Object.entries(props));
    const direct = parseBrokerConfig(map);
    const read = parseBrokerConfig(parseProperties(serializeProperties(map)));
    assert.deepEqual(read.originals, direct.originals);
    assert.deepEqual(read.values, direct.values);
  }), { numRuns: 300 });
});

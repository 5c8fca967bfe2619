// MirrorMaker 2's record formats: round trips, and bytes as its Java structs write them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  decodeCheckpoint, decodeHeartbeat, decodeOffsetSync, decodeSourceOffset, encodeCheckpoint, encodeHeartbeat, encodeOffsetSync, encodeSourceOffset,
} from '../../src/mirror/index.js';

test('an OffsetSync is (topic STRING, partition INT32) -> (upstreamOffset INT64, offset INT64)', () => {
  const { key, value } = encodeOffsetSync({ topic: 'ab', partition: 3, upstreamOffset: 10, downstreamOffset: 7 });
  assert.equal(key.toString('hex'), '0002' + '6162' + '00000003');
  assert.equal(value.toString('hex'), '000000000000000a' + '0000000000000007');
});

test('a Heartbeat and a Checkpoint carry version 0 first in their values', () => {
  const h = encodeHeartbeat({ sourceClusterAlias: 'A', targetClusterAlias: 'B', timestamp: 1 });
  assert.equal(h.key.toString('hex'), '000141' + '000142');
  assert.equal(h.value.toString('hex'), '0000' + '0000000000000001');
  const c = encodeCheckpoint({ group: 'g', topic: 't', partition: 0, upstreamOffset: 5, downstreamOffset: 4, metadata: '' });
  assert.equal(c.value.toString('hex'), '0000' + '0000000000000005' + '0000000000000004' + '0000');
});

test('the formats round-trip', () => {
  const text = fc.string({ maxLength: 40 });
  const offset = fc.integer({ min: -1, max: 2 ** 40 });
  fc.assert(fc.property(text, fc.integer({ min: 0, max: 1 << 20 }), offset, offset, (topic, partition, u, d) => {
    const s = { topic, partition, upstreamOffset: u, downstreamOffset: d };
    const e = encodeOffsetSync(s);
    assert.deepEqual(decodeOffsetSync(e.key, e.value), s);
  }));
  fc.assert(fc.property(text, text, text, offset, offset, (group, topic, metadata, u, d) => {
    const c = { group, topic, partition: 1, upstreamOffset: u, downstreamOffset: d, metadata };
    const e = encodeCheckpoint(c);
    assert.deepEqual(decodeCheckpoint(e.key, e.value), c);
  }));
  const h = { sourceClusterAlias: 'us-west', targetClusterAlias: 'us-east', timestamp: 1_700_000_000_000 };
  const he = encodeHeartbeat(h);
  assert.deepEqual(decodeHeartbeat(he.key, he.value), h);
  const o = { cluster: 'A', topic: 'orders', partition: 2, offset: 41 };
  const oe = encodeSourceOffset(o);
  assert.equal(oe.key.toString(), '["MirrorSourceConnector",{"cluster":"A","partition":2,"topic":"orders"}]');
  assert.deepEqual(decodeSourceOffset(oe.key, oe.value), o);
  assert.equal(decodeSourceOffset(Buffer.from('["other",{}]'), oe.value), null);
});

test('truncated records are refused, not read past their end', () => {
  const e = encodeCheckpoint({ group: 'g', topic: 't', partition: 0, upstreamOffset: 5, downstreamOffset: 4, metadata: 'm' });
  for (let n = 0; n < e.value.length; n++) assert.throws(() => decodeCheckpoint(e.key, e.value.subarray(0, n)));
});

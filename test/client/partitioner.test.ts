import { test } from 'node:test';
import assert from 'node:assert/strict';
import { murmur2, partitionForKey } from '../../src/client/index.js';

test('murmur2 matches the Java client on Kafka\'s own test vectors', () => {
  const vectors: [string, number][] = [
    ['21', -973932308], ['foobar', -790332482], ['a-little-bit-long-string', -985981536],
    ['a-little-bit-longer-string', -1486304829], ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971], ['abc', 479470107],
  ];
  for (const [input, expected] of vectors) assert.equal(murmur2(Buffer.from(input)), expected, input);
  assert.equal(partitionForKey(Buffer.from('abc'), 6), 479470107 % 6);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parsePartitionKey, partitionKey, partitionName } from '../../src/util/index.js';

test('partition keys of different partitions differ, and give back their topic and partition', () => {
  // Legal topic names (Kafka: [a-zA-Z0-9._-]); partitions include the -1 a bad request may carry.
  const topic = fc.stringMatching(/^[a-zA-Z0-9._-]{1,20}$/);
  const partition = fc.integer({ min: -1, max: 100_000 });
  fc.assert(fc.property(topic, partition, topic, partition, (t1, p1, t2, p2) => {
    assert.equal(partitionKey(t1, p1) === partitionKey(t2, p2), t1 === t2 && p1 === p2);
    assert.deepEqual(parsePartitionKey(partitionKey(t1, p1)), { topic: t1, partition: p1 });
  }));
  assert.notEqual(partitionKey('t-', 1), partitionKey('t', -1), 'a "-" joined key would give both "t--1"');
});

test('a partition is printed as Kafka prints it', () => {
  assert.equal(partitionName('orders', 3), 'orders-3');
});

// Replication throttles: the sampled quota allows what keeps the rate over the sampled time at
// or below the setting, and the throttled-replica lists name partitions on brokers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReplicationQuota, UNTHROTTLED_RATE, isThrottledReplica, parseThrottledReplicas } from '../../src/replication/index.js';

const config = { windowCount: 11, windowMs: 1000 };

test('without a rate nothing is throttled', () => {
  const q = new ReplicationQuota(() => UNTHROTTLED_RATE, config);
  assert.equal(q.isThrottling, false);
  assert.equal(q.allowance(0), Infinity);
  assert.equal(q.delayMs(0), 0);
});

test('a copy that takes everything it is allowed moves at the rate, from the first second on', () => {
  const rate = 1024 * 1024;
  const q = new ReplicationQuota(() => rate, config);
  let moved = 0;
  // A fetch every 10 ms taking whatever the quota allows (at most 1 MiB, like replica.fetch.max.bytes).
  for (let now = 0; now <= 20_000; now += 10) {
    const bytes = Math.min(q.allowance(now), 1024 * 1024);
    q.record(bytes, now);
    moved += bytes;
    if (now > 0 && now % 1000 === 0) assert.ok(moved <= rate * (now / 1000 + 0.1) + 1, `${moved} bytes moved after ${now} ms`);
  }
  assert.ok(moved >= rate * 19.5, `${moved} bytes in 20 s`);
});

test('a used-up quota says how long to wait, and allows bytes again after it', () => {
  const q = new ReplicationQuota(() => 1000, config);
  q.record(q.allowance(0), 0);
  q.record(500, 0);
  assert.equal(q.allowance(0), 0);
  const wait = q.delayMs(0);
  assert.ok(wait > 0 && wait <= 700, `wait ${wait}`);
  assert.ok(q.allowance(wait) > 0);
});

test('throttled replica lists: * or partition:broker pairs', () => {
  assert.equal(isThrottledReplica(parseThrottledReplicas(undefined), 0, 1), false);
  assert.equal(isThrottledReplica(parseThrottledReplicas(''), 0, 1), false);
  assert.equal(isThrottledReplica(parseThrottledReplicas('*'), 3, 7), true);
  const l = parseThrottledReplicas('0:1,0:2,1:3');
  assert.equal(isThrottledReplica(l, 0, 2), true);
  assert.equal(isThrottledReplica(l, 1, 2), false);
  assert.equal(isThrottledReplica(l, 1, 3), true);
});

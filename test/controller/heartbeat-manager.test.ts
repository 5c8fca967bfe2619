import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerHeartbeatManager } from '../../src/controller/index.js';

test('a session is valid for broker.session.timeout.ms after the last contact, and not a millisecond more', () => {
  const m = new BrokerHeartbeatManager(9000);
  m.touch(1, 1000);
  assert.equal(m.hasValidSession(1, 9999), true);
  assert.equal(m.hasValidSession(1, 10_000), false);
  assert.deepEqual(m.expired([1], 10_000), [1]);
});

test('a late heartbeat from the past does not move the deadline back, and the reported offset only grows', () => {
  const m = new BrokerHeartbeatManager(9000);
  m.touch(1, 5000, 40);
  m.touch(1, 4000, 30);
  assert.deepEqual(m.session(1), { lastContactMs: 5000, metadataOffset: 40, answersPending: 0 });
});

test('expired brokers come lowest id first; unknown and removed brokers have no session', () => {
  const m = new BrokerHeartbeatManager(100);
  m.touch(3, 0);
  m.touch(1, 0);
  m.touch(2, 50);
  assert.deepEqual(m.expired([3, 2, 1, 7], 120), [1, 3, 7]);
  m.remove(2);
  assert.equal(m.hasValidSession(2, 60), false);
});

test('a broker waiting for the answer to its heartbeat is not silent; once answered, its silence counts from the answer', () => {
  const m = new BrokerHeartbeatManager(9000);
  m.touch(1, 1000);
  m.answerPending(1);
  m.answerPending(1);
  assert.deepEqual(m.expired([1], 60_000), []);
  m.answered(1, 60_000);
  assert.deepEqual(m.expired([1], 80_000), [], 'one answer still pending');
  m.answered(1, 80_000);
  assert.equal(m.hasValidSession(1, 88_999), true);
  assert.equal(m.hasValidSession(1, 89_000), false);
  // An answer nobody waited for (a session started over meanwhile) renews nothing.
  m.answered(1, 100_000);
  assert.equal(m.session(1)!.lastContactMs, 80_000);
});

test('a stall of the controller moves every session on by its length, never past now', () => {
  const m = new BrokerHeartbeatManager(9000);
  m.touch(1, 1000);
  m.touch(2, 7000);
  m.discountStall(5000, 10_000);
  assert.deepEqual([m.session(1)!.lastContactMs, m.session(2)!.lastContactMs], [6000, 10_000]);
  m.discountStall(-20, 10_000);
  assert.equal(m.session(1)!.lastContactMs, 6000, 'an early timer is no stall');
});

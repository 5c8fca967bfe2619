// ConnectionQuotas on its own, with time as an input: counts, the protected inter-broker listener,
// accept throttles for max.connection.creation.rate (broker and listener) and the address quota.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectionQuotas, connectionAddress } from '../../src/network/connection-quotas.js';
import { limits } from '../../src/util/index.js';

const window = { samples: 11, windowMs: 1000 };
const quotas = (extra = {}, listeners = 2) => new ConnectionQuotas({ connectionsMax: 1_000, connectionsPerIpMax: 1_000, interBrokerListener: 'BROKER', ...extra }, window, () => listeners);

test('a broker connection creation rate makes the connection over it wait, at most one window; the inter-broker listener only meets its own listener\'s rate', () => {
  const q = quotas({ connectionCreationRateMax: 5 });
  assert.equal(q.rateLimited('CLIENT'), true);
  const waits = Array.from({ length: 8 }, () => q.acceptThrottleMs('CLIENT', 0));
  assert.deepEqual(waits.slice(0, 5), [0, 0, 0, 0, 0]);
  // (6 - 5) / 5 of a window for the sixth, then more for each one after it, never over a window.
  assert.deepEqual(waits.slice(5), [200, 400, 600]);
  assert.ok(Array.from({ length: 20 }, () => q.acceptThrottleMs('CLIENT', 0)).every((w) => w <= 1000));
  // The inter-broker listener is not counted against it, only against its own listener rate,
  // which is the broker's when not set (as in Kafka).
  assert.deepEqual(Array.from({ length: 6 }, () => q.acceptThrottleMs('BROKER', 0)), [0, 0, 0, 0, 0, 200]);
  // Connections spread out below the rate never wait.
  const later = quotas({ connectionCreationRateMax: 5 });
  for (let t = 0; t < 20_000; t += 250) assert.equal(later.acceptThrottleMs('CLIENT', t), 0, `at ${t} ms`);
});

test('a listener rate applies to its listener only, the inter-broker one included; the broker rate and it take the longer wait', () => {
  const q = quotas({ listenerConnectionCreationRateMax: new Map([['BROKER', 2], ['CLIENT', 10]]), connectionCreationRateMax: 4 });
  assert.deepEqual([0, 1, 2].map(() => q.acceptThrottleMs('BROKER', 0)), [0, 0, 500]);
  assert.deepEqual([0, 1, 2, 3, 4].map(() => q.acceptThrottleMs('CLIENT', 0)), [0, 0, 0, 0, 250]);
  assert.equal(q.rateLimited('OTHER'), true, 'the broker rate covers every other listener');
  // With one listener there is nothing to protect: the broker rate counts it.
  const single = quotas({ connectionCreationRateMax: 1 }, 1);
  assert.equal(single.rateLimited('BROKER'), true);
});

test('an address over its connection_creation_rate is told to wait and its refused connections are not counted', () => {
  const q = quotas();
  assert.equal(q.addressThrottleMs('10.0.0.1', null, 0), 0, 'no quota, no throttle');
  assert.deepEqual([0, 1].map(() => q.addressThrottleMs('10.0.0.1', 2, 0)), [0, 0]);
  const third = q.addressThrottleMs('10.0.0.1', 2, 0);
  assert.ok(third > 0);
  // Refused connections do not add to the rate: the next attempt waits no longer.
  assert.equal(q.addressThrottleMs('10.0.0.1', 2, 0), third);
  assert.equal(q.addressThrottleMs('10.0.0.2', 2, 0), 0, 'another address has its own rate');
  // Measured over the window: a second later it may connect again.
  assert.equal(q.addressThrottleMs('10.0.0.1', 2, 11_000), 0);
});

test('the address rates kept are bounded: the least recently seen are forgotten', () => {
  const q = quotas();
  const n = limits.connectionRateAddressesMax + 50;
  for (let i = 0; i < n; i++) q.addressThrottleMs(`fd00::${i.toString(16)}`, 100, 0);
  const kept = (q as unknown as { addressRates: Map<string, unknown> }).addressRates;
  assert.ok(kept.size <= limits.connectionRateAddressesMax, `${kept.size} kept`);
  assert.ok(kept.has(`fd00::${(n - 1).toString(16)}`) && !kept.has('fd00::0'));
});

test('counts: per address (with overrides), per listener, the broker (inter-broker listener protected), and slots given back', () => {
  const q = quotas({ connectionsMax: 3, connectionsPerIpMax: 2, connectionsPerIpOverrides: new Map([['10.0.0.9', 0]]), listenerConnectionsMax: new Map([['CLIENT', 2]]) });
  assert.equal(q.admit('10.0.0.9', 'CLIENT'), 'max.connections.per.ip');
  assert.equal(q.admit('10.0.0.1', 'CLIENT'), null);
  assert.equal(q.admit('10.0.0.1', 'OTHER'), null);
  assert.equal(q.admit('10.0.0.1', 'OTHER'), 'max.connections.per.ip');
  assert.equal(q.admit('10.0.0.2', 'CLIENT'), null);
  assert.equal(q.admit('10.0.0.3', 'CLIENT'), 'listener.name.client.max.connections');
  assert.equal(q.admit('10.0.0.3', 'OTHER'), 'max.connections');
  assert.equal(q.admit('10.0.0.3', 'BROKER'), null, 'the inter-broker listener past max.connections');
  assert.equal(q.connections, 4);
  q.release('10.0.0.1', 'CLIENT');
  q.release('10.0.0.3', 'BROKER');
  assert.equal(q.admit('10.0.0.3', 'CLIENT'), null);
  assert.throws(() => { for (let i = 0; i < 10; i++) q.release('10.0.0.4', 'OTHER'); }, /more connection slots given back than taken/);
});

test('IPv4 clients of a dual-stack listener are counted under their IPv4 address', () => {
  assert.equal(connectionAddress('::ffff:127.0.0.1'), '127.0.0.1');
  assert.equal(connectionAddress('FD00::1'), 'fd00::1');
  assert.equal(connectionAddress('0:0:0:0:0:0:0:1'), '::1', 'IPv6 written out in full is the same address');
  assert.equal(connectionAddress('fe80::1%eth0'), 'fe80::1%eth0');
  assert.equal(connectionAddress('::ffff'), '::ffff');
});

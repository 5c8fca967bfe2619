// The client quota manager with a fake clock: Kafka's resolution order, the rate and throttle
// math, who shares a rate, request_percentage's cap, and the controller mutation token bucket.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ClientQuotasDelta, ClientQuotasImage, type QuotaEntityPart } from '../../src/metadata/index.js';
import { ClientQuotaManager, QuotaKey, resolveClientQuota } from '../../src/broker/quotas.js';
import { SampledRate, TokenBucket, throttleTimeMs } from '../../src/util/index.js';
import { ManualClock } from '../../src/util/index.js';

type Entity = { user?: string | null; clientId?: string | null };

function entityParts(e: Entity): QuotaEntityPart[] {
  const parts: QuotaEntityPart[] = [];
  if (e.user !== undefined) parts.push({ entityType: 'user', entityName: e.user });
  if (e.clientId !== undefined) parts.push({ entityType: 'client-id', entityName: e.clientId });
  return parts;
}

function image(quotas: [Entity, string, number][], from = ClientQuotasImage.EMPTY): ClientQuotasImage {
  const d = new ClientQuotasDelta(from);
  for (const [e, key, value] of quotas) d.replay({ entity: entityParts(e), key, value, remove: false });
  return d.apply();
}

// The eight levels in Kafka's order, each with a distinct value so the winner is visible.
const LEVELS: [Entity, number][] = [
  [{ user: 'alice', clientId: 'app' }, 1],
  [{ user: 'alice', clientId: null }, 2],
  [{ user: 'alice' }, 3],
  [{ user: null, clientId: 'app' }, 4],
  [{ user: null, clientId: null }, 5],
  [{ user: null }, 6],
  [{ clientId: 'app' }, 7],
  [{ clientId: null }, 8],
];

test('resolution follows DefaultQuotaCallback: the most specific level that sets the key wins, for any subset of levels', () => {
  fc.assert(fc.property(fc.subarray(LEVELS), (present) => {
    const img = image(present.map(([e, v]) => [e, 'producer_byte_rate', v]));
    const got = resolveClientQuota(img, 'producer_byte_rate', 'alice', 'app');
    const expected = present.length === 0 ? null : Math.min(...present.map(([, v]) => v));
    assert.equal(got?.limit ?? null, expected);
  }));
});

test('resolution: other names, other keys and empty client ids do not match', () => {
  const img = image([[{ user: 'bob' }, 'producer_byte_rate', 10], [{ clientId: 'other' }, 'producer_byte_rate', 20],
    [{ user: 'alice' }, 'consumer_byte_rate', 30], [{ user: null, clientId: null }, 'producer_byte_rate', 40]]);
  assert.equal(resolveClientQuota(img, 'producer_byte_rate', 'alice', 'app')?.limit, 40);
  assert.equal(resolveClientQuota(img, 'producer_byte_rate', 'bob', 'app')?.limit, 10);
  // Kafka skips the levels with a client-id part for a client without an id.
  assert.equal(resolveClientQuota(img, 'producer_byte_rate', 'alice', ''), null);
  assert.equal(resolveClientQuota(img, 'consumer_byte_rate', 'alice', 'x')?.limit, 30);
});

test('rate: a fresh sensor measures over one window at least; samples stop counting 11 windows after their last record', () => {
  const w = { samples: 11, windowMs: 1000 };
  const r = new SampledRate(w);
  r.record(10_000, 0);
  assert.equal(r.windowMs(0), 1000);
  assert.equal(r.measure(0), 10_000, '10 kB over the one-window minimum');
  assert.equal(r.measure(4000), 2500, 'over the 4 s since');
  r.record(5_000, 12_500);
  // The first sample (last record at 0) no longer counts at 12.5 s.
  assert.equal(r.measure(12_500), 5000);
  fc.assert(fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 1e6 })), { maxLength: 60 }), (steps) => {
    const s = new SampledRate(w);
    let now = 0;
    let total = 0;
    for (const [dt, v] of steps) { now += dt; s.record(v, now); total += v; }
    const first = steps.length === 0 ? 0 : steps[0]![0];
    const elapsed = now - first;
    // Within 11 windows of the first record nothing expires: everything counts, over the time since it (one window at least).
    if (steps.length > 0 && elapsed < 11_000) assert.ok(Math.abs(s.measure(now) - total / (Math.max(elapsed, 1000) / 1000)) < 1e-6 * Math.max(1, total));
  }));
});

test('throttle time is (observed - quota) / quota x window, and 0 within the quota', () => {
  assert.equal(throttleTimeMs(2000, 1000, 10_000), 10_000);
  assert.equal(throttleTimeMs(1500, 1000, 10_000), 5000);
  assert.equal(throttleTimeMs(1000, 1000, 10_000), 0);
  assert.equal(throttleTimeMs(10, 1000, 10_000), 0);
  fc.assert(fc.property(fc.double({ min: 0, max: 1000, noNaN: true }), fc.double({ min: 1, max: 1e9, noNaN: true }), fc.integer({ min: 1, max: 100_000 }),
    (factor, quota, windowMs) => {
      const observed = quota * factor;
      const t = throttleTimeMs(observed, quota, windowMs);
      if (observed <= quota) return t === 0;
      // After waiting t the same bytes spread over window + t are back at the quota (to rounding).
      return Math.abs((observed * windowMs) / (windowMs + t) - quota) <= quota * 1e-6 + (observed * windowMs) / (windowMs + t) ** 2;
    }));
});

test('producer quota: throttled by (observed - quota) / quota x window once over, shared by the user\'s client ids', () => {
  const clock = new ManualClock(1_000_000);
  const m = new ClientQuotaManager(clock);
  m.update(image([[{ user: 'alice' }, 'producer_byte_rate', 1000]]));
  assert.equal(m.recordAndGetThrottleTimeMs(QuotaKey.ProducerByteRate, 'User:alice', 'a', 1000), 0, '1 kB over the one-window minimum: at the quota');
  // A user quota is one rate for all of the user's client ids: 2 kB/s is 100% over, so one window.
  assert.equal(m.recordAndGetThrottleTimeMs(QuotaKey.ProducerByteRate, 'User:alice', 'b', 1000), 1000);
  assert.equal(m.recordAndGetThrottleTimeMs(QuotaKey.ProducerByteRate, 'User:bob', 'a', 50_000), 0, 'bob has no quota');
  clock.advance(500);
  // 2.5 kB over 1 s: 150% over.
  assert.equal(m.recordAndGetThrottleTimeMs(QuotaKey.ProducerByteRate, 'User:alice', 'c', 500), 1500);
  clock.advance(2000);
  assert.equal(m.recordAndGetThrottleTimeMs(QuotaKey.ProducerByteRate, 'User:alice', 'c', 0), 0, '2.5 kB over 2.5 s');
  clock.advance(12_000);
  assert.equal(m.recordAndGetThrottleTimeMs(QuotaKey.ProducerByteRate, 'User:alice', 'c', 1000), 0, 'the old samples no longer count');
});

test('client-id levels keep one rate per client id; a quota change applies to the rates already measured', () => {
  const clock = new ManualClock(0);
  const m = new ClientQuotaManager(clock);
  m.update(image([[{ clientId: null }, 'consumer_byte_rate', 100]]));
  assert.equal(m.recordAndGetThrottleTimeMs(QuotaKey.ConsumerByteRate, 'User:ANONYMOUS', 'one', 100), 0);
  assert.equal(m.recordAndGetThrottleTimeMs(QuotaKey.ConsumerByteRate, 'User:ANONYMOUS', 'two', 100), 0, 'its own rate');
  assert.ok(m.recordAndGetThrottleTimeMs(QuotaKey.ConsumerByteRate, 'User:ANONYMOUS', 'one', 1) > 0);
  m.update(image([[{ clientId: null }, 'consumer_byte_rate', 1000]]));
  assert.equal(m.recordAndGetThrottleTimeMs(QuotaKey.ConsumerByteRate, 'User:ANONYMOUS', 'one', 1), 0);
  m.unrecord(QuotaKey.ConsumerByteRate, 'User:ANONYMOUS', 'one', 1);
  // A fetch is bounded by what (samples - 1) windows at the quota hold, so it can always fit eventually.
  assert.equal(m.maxFetchBytes('User:ANONYMOUS', 'one'), 10_000);
  assert.equal(m.maxFetchBytes('User:ANONYMOUS', ''), Infinity, 'no client id: no client-id quota');
});

test('request_percentage throttles at most one window', () => {
  const clock = new ManualClock(0);
  const m = new ClientQuotaManager(clock);
  m.update(image([[{ user: null }, 'request_percentage', 1]]));
  // 1% of a thread over 1 s is 10 ms of handling; 5 s of it is 500x over.
  assert.equal(m.recordAndGetThrottleTimeMs(QuotaKey.RequestPercentage, 'User:x', 'c', 500), 1000);
});

test('controller mutations: a bucket of quota x samples x window, strict refusal while in debt, permissive throttle', () => {
  const clock = new ManualClock(0);
  const m = new ClientQuotaManager(clock);
  m.update(image([[{ user: 'alice' }, 'controller_mutation_rate', 2]]));
  // Burst 2 x 11 x 1 s = 22 tokens: 22 partitions pass, a 30-partition topic takes it to -8 and passes too.
  assert.deepEqual(m.recordMutation('User:alice', 'c', 22, true), { refused: false, throttleTimeMs: 0 });
  assert.deepEqual(m.recordMutation('User:alice', 'c', 8, true), { refused: false, throttleTimeMs: 0 });
  // In debt by 8 at 2/s: 4 s until the next one may pass.
  assert.deepEqual(m.recordMutation('User:alice', 'c', 1, true), { refused: true, throttleTimeMs: 4000 });
  clock.advance(4000);
  assert.deepEqual(m.recordMutation('User:alice', 'c', 1, true), { refused: false, throttleTimeMs: 0 });
  // Permissive (old versions): taken, and throttled by the debt it leaves (2 tokens at 2/s = 1 s).
  assert.deepEqual(m.recordMutation('User:alice', 'c', 1, false), { refused: false, throttleTimeMs: 1000 });
  assert.deepEqual(m.recordMutation('User:bob', 'c', 1000, true), { refused: false, throttleTimeMs: 0 }, 'no quota for bob');
  const b = new TokenBucket({ samples: 11, windowMs: 1000 });
  assert.equal(b.measure(5, 0), 55);
  b.record(100, 5, 0);
  assert.equal(b.measure(5, 1000), -40);
  assert.equal(b.measure(5, 100_000), 55, 'refills up to the burst only');
});

// The broker's lifecycle against a controller, driven by hand with a simulated clock: register,
// heartbeat fenced until caught up, run, and shut down in a controlled way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BrokerLifecycle, type LifecycleRequest } from '../../src/node/lifecycle.js';
import { ErrorCode } from '../../src/protocol/index.js';

const HEARTBEAT_MS = 2000;
const BACKOFF_MS = 100;
const SESSION_MS = 9000;

function lifecycle(nowMs = 0, previousBrokerEpoch?: bigint): BrokerLifecycle {
  return new BrokerLifecycle({
    registration: {
      brokerId: 3, clusterId: 'c', incarnationId: 'AAAAAAAAAAAAAAAAAAAAAw', listeners: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9092, securityProtocol: 0 }],
      features: [], rack: null, isMigratingZkBroker: false, logDirs: [],
    },
    heartbeatIntervalMs: HEARTBEAT_MS, retryBackoffMs: BACKOFF_MS, sessionTimeoutMs: SESSION_MS,
    ...(previousBrokerEpoch !== undefined ? { previousBrokerEpoch } : {}),
  }, nowMs);
}

test('the first registration sends the broker epoch the last clean shutdown recorded (KIP-966: the controller tells a clean restart)', () => {
  const reg = lifecycle(0, 41n).poll(0, -1n);
  assert.equal((reg!.request as { previousBrokerEpoch: bigint }).previousBrokerEpoch, 41n);
});

const ok = { errorCode: 0, isCaughtUp: true, isFenced: false, shouldShutDown: false };
const heartbeat = (r: LifecycleRequest | null) => { assert.equal(r?.api, 'BrokerHeartbeat'); return r!.request as { brokerEpoch: bigint; wantFence: boolean; wantShutDown: boolean; currentMetadataOffset: bigint }; };

test('a broker registers, heartbeats fenced until its metadata has caught up, then is unfenced and heartbeats every interval', () => {
  const l = lifecycle();
  const reg = l.poll(0, -1n);
  assert.equal(reg?.api, 'BrokerRegistration');
  assert.equal((reg!.request as { previousBrokerEpoch: bigint }).previousBrokerEpoch, -1n);
  assert.equal(l.poll(0, -1n), null, 'one request in flight at a time');
  l.onRegistrationResponse(5, { errorCode: 0, brokerEpoch: 42n });
  assert.equal(l.state, 'recovery');
  const first = heartbeat(l.poll(5, 10n));
  assert.deepEqual([first.brokerEpoch, first.wantFence, first.currentMetadataOffset], [42n, true, 10n]);
  l.onHeartbeatResponse(6, { ...ok, isFenced: true, isCaughtUp: false });
  assert.equal(l.state, 'recovery');
  assert.equal(l.poll(6 + HEARTBEAT_MS - 1, 40n), null, 'not before the interval');
  l.markReadyToUnfence();
  const second = heartbeat(l.poll(6 + HEARTBEAT_MS, 41n));
  assert.equal(second.wantFence, false);
  l.onHeartbeatResponse(6 + HEARTBEAT_MS, ok);
  assert.equal(l.state, 'running');
  assert.equal(l.nextWakeMs(), 6 + 2 * HEARTBEAT_MS);
});

test('a refused registration and a failed request are retried after the backoff, not at once', () => {
  const l = lifecycle();
  l.poll(0, -1n);
  l.onRegistrationResponse(1, { errorCode: ErrorCode.DUPLICATE_BROKER_REGISTRATION, brokerEpoch: -1n });
  assert.equal(l.state, 'starting');
  assert.equal(l.poll(1 + BACKOFF_MS - 1, -1n), null);
  assert.equal(l.poll(1 + BACKOFF_MS, -1n)?.api, 'BrokerRegistration');
  l.onRequestFailed(200);
  assert.equal(l.nextWakeMs(), 200 + BACKOFF_MS);
});

test('STALE_BROKER_EPOCH (the controller dropped this registration) makes the broker register again, naming its old epoch', () => {
  const l = lifecycle();
  l.poll(0, -1n);
  l.onRegistrationResponse(0, { errorCode: 0, brokerEpoch: 7n });
  l.markReadyToUnfence();
  heartbeat(l.poll(0, 7n));
  l.onHeartbeatResponse(1, ok);
  heartbeat(l.poll(1 + HEARTBEAT_MS, 9n));
  l.onHeartbeatResponse(2 + HEARTBEAT_MS, { ...ok, errorCode: ErrorCode.STALE_BROKER_EPOCH });
  assert.equal(l.state, 'starting');
  const again = l.poll(2 + HEARTBEAT_MS + BACKOFF_MS, 9n);
  assert.equal(again?.api, 'BrokerRegistration');
  assert.equal((again!.request as { previousBrokerEpoch: bigint }).previousBrokerEpoch, 7n);
});

test('a running broker that the controller fenced goes back to recovery; controlled shutdown heartbeats wantShutDown until shouldShutDown', () => {
  const l = lifecycle();
  l.poll(0, -1n);
  l.onRegistrationResponse(0, { errorCode: 0, brokerEpoch: 1n });
  l.markReadyToUnfence();
  heartbeat(l.poll(0, 1n));
  l.onHeartbeatResponse(0, ok);
  heartbeat(l.poll(HEARTBEAT_MS, 1n));
  l.onHeartbeatResponse(HEARTBEAT_MS, { ...ok, isFenced: true });
  assert.equal(l.state, 'recovery');
  l.beginControlledShutdown(HEARTBEAT_MS + 1);
  assert.equal(l.state, 'pending-controlled-shutdown');
  const asked = heartbeat(l.poll(HEARTBEAT_MS + 1, 1n));
  assert.equal(asked.wantShutDown, true, 'asked at once, not at the next interval');
  l.onHeartbeatResponse(HEARTBEAT_MS + 2, { ...ok, shouldShutDown: false });
  assert.equal(l.state, 'pending-controlled-shutdown', 'leaderships are still moving');
  heartbeat(l.poll(2 * HEARTBEAT_MS + 2, 1n));
  l.onHeartbeatResponse(2 * HEARTBEAT_MS + 3, { ...ok, shouldShutDown: true });
  assert.equal(l.state, 'shutting-down');
  assert.equal(l.poll(10 * HEARTBEAT_MS, 1n), null);
  assert.equal(l.nextWakeMs(), null);
});

test('the lease: a broker holds it until a session after sending the last heartbeat answered unfenced; a stall past it loses it until a heartbeat is answered unfenced again', () => {
  const l = lifecycle();
  l.poll(0, -1n);
  l.onRegistrationResponse(0, { errorCode: 0, brokerEpoch: 1n });
  assert.equal(l.holdsLease(0), false, 'not before it is unfenced');
  l.markReadyToUnfence();
  heartbeat(l.poll(10, 1n));
  l.onHeartbeatResponse(20, { ...ok, isFenced: true });
  assert.equal(l.holdsLease(20), false, 'a fenced answer gives no lease');
  heartbeat(l.poll(20 + HEARTBEAT_MS, 1n));
  l.onHeartbeatResponse(30 + HEARTBEAT_MS, ok);
  assert.equal(l.state, 'running');
  // Counted from the send, not the answer: the controller received it in between.
  assert.equal(l.holdsLease(20 + HEARTBEAT_MS + SESSION_MS - 1), true);
  assert.equal(l.holdsLease(20 + HEARTBEAT_MS + SESSION_MS), false);
  // A stall: the next heartbeat was sent before it and answered long after; the answer came
  // before the controller fenced (isFenced false) but cannot extend past its own send.
  const sent = 30 + 2 * HEARTBEAT_MS;
  heartbeat(l.poll(sent, 2n));
  l.onHeartbeatResponse(sent + 3 * SESSION_MS, ok);
  assert.equal(l.holdsLease(sent + 3 * SESSION_MS), false, 'woken: the lease ran out during the stall');
  const next = sent + 3 * SESSION_MS + HEARTBEAT_MS;
  heartbeat(l.poll(next, 5n));
  l.onHeartbeatResponse(next + 5, { ...ok, isFenced: true });
  assert.equal(l.state, 'recovery');
  assert.equal(l.holdsLease(next + 5), false);
  heartbeat(l.poll(next + 5 + HEARTBEAT_MS, 9n));
  l.onHeartbeatResponse(next + 6 + HEARTBEAT_MS, ok);
  assert.equal(l.holdsLease(next + 6 + HEARTBEAT_MS), true, 'unfenced again (the controller asks for its fencing in its metadata first)');
});

test('a broker that never registered shuts down at once', () => {
  const l = lifecycle();
  l.beginControlledShutdown(0);
  assert.equal(l.state, 'shutting-down');
});

test('property: whatever the controller answers and whenever, one request at most is in flight and heartbeats carry the registered epoch', () => {
  const step = fc.oneof(
    fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 3000 }) }),
    fc.record({ kind: fc.constant('answer' as const), errorCode: fc.constantFrom(0, 0, 0, ErrorCode.STALE_BROKER_EPOCH, ErrorCode.NOT_CONTROLLER, ErrorCode.DUPLICATE_BROKER_REGISTRATION), fenced: fc.boolean(), shut: fc.boolean() }),
    fc.record({ kind: fc.constant('fail' as const) }),
    fc.record({ kind: fc.constant('ready' as const) }),
    fc.record({ kind: fc.constant('shutdown' as const) }),
  );
  fc.assert(fc.property(fc.array(step, { maxLength: 80 }), (steps) => {
    const l = lifecycle();
    let now = 0;
    let epoch = 100n;
    let inFlight: LifecycleRequest | null = null;
    for (const s of steps) {
      if (s.kind === 'advance') now += s.ms;
      else if (s.kind === 'ready') l.markReadyToUnfence();
      else if (s.kind === 'shutdown') l.beginControlledShutdown(now);
      else if (inFlight && s.kind === 'fail') { l.onRequestFailed(now); inFlight = null; }
      else if (inFlight && s.kind === 'answer') {
        if (inFlight.api === 'BrokerRegistration') l.onRegistrationResponse(now, { errorCode: s.errorCode, brokerEpoch: s.errorCode === 0 ? ++epoch : -1n });
        else l.onHeartbeatResponse(now, { errorCode: s.errorCode, isCaughtUp: true, isFenced: s.fenced, shouldShutDown: s.shut });
        inFlight = null;
      }
      const r = l.poll(now, 5n);
      if (r) {
        assert.equal(inFlight, null, 'a second request while one is in flight');
        inFlight = r;
        if (r.api === 'BrokerHeartbeat') assert.equal((r.request as { brokerEpoch: bigint }).brokerEpoch, l.brokerEpoch);
        if (r.api === 'BrokerHeartbeat') assert.ok(l.brokerEpoch >= 0n, 'a heartbeat before any registration');
      }
      if (l.state === 'shutting-down') assert.equal(l.poll(now + 10 ** 6, 5n), null);
    }
  }), { numRuns: 300 });
});

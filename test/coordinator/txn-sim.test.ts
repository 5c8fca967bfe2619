// Random operation sequences against one transaction coordinator shard (fast-check, fixed seed):
// clients initializing, adding partitions and offsets, committing and aborting, stale producers,
// failed appends, markers written late, timeouts, expiration and coordinator reloads, with clients
// of transaction version 1 and 2 (EndTxn v5 bumping the epoch, partitions added as for Produce v12). After every
// step: a producer's epoch never goes back, a producer id belongs to one transactional id only,
// and the state rebuilt from the written records equals the live state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ErrorCode } from '../../src/protocol/index.js';
import { decodeTxnRecord, TransactionCoordinatorShard, type TransactionMetadata } from '../../src/coordinator/index.js';
import { TxnHarness, tp } from './txn-harness.js';

const IDS = ['t0', 't1', 't2'];

type Op =
  | { kind: 'init'; id: number; withExpected: boolean; stale: number }
  | { kind: 'add'; id: number; stale: number; partitions: number[]; tv2: boolean }
  | { kind: 'offsets'; id: number; group: number }
  | { kind: 'end'; id: number; commit: boolean; stale: number; tv2: boolean }
  | { kind: 'markers'; count: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'failNext'; code: number }
  | { kind: 'reload' };

/** Mostly the client's current producer, sometimes an older one. */
const staleArb = fc.constantFrom(0, 0, 0, 0, 0, 1, 2);

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('init' as const), id: fc.nat(2), withExpected: fc.boolean(), stale: staleArb }),
  fc.record({ kind: fc.constant('add' as const), id: fc.nat(2), stale: staleArb, partitions: fc.array(fc.nat(4), { minLength: 1, maxLength: 3 }), tv2: fc.boolean() }),
  fc.record({ kind: fc.constant('offsets' as const), id: fc.nat(2), group: fc.nat(2) }),
  fc.record({ kind: fc.constant('end' as const), id: fc.nat(2), commit: fc.boolean(), stale: staleArb, tv2: fc.boolean() }),
  fc.record({ kind: fc.constant('markers' as const), count: fc.nat(2) }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.oneof({ arbitrary: fc.integer({ min: 1, max: 3000 }), weight: 4 }, { arbitrary: fc.integer({ min: 10_000, max: 40_000 }), weight: 1 }) }),
  fc.record({ kind: fc.constant('failNext' as const), code: fc.constantFrom(ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.REQUEST_TIMED_OUT) }),
  fc.constant({ kind: 'reload' as const }),
);

/** What a record can carry: the last epoch lives in memory only. */
const durable = (m: TransactionMetadata) => ({ ...m, lastProducerEpoch: -1 });

function replayedFrom(h: TxnHarness): Map<string, TransactionMetadata> {
  const shard = new TransactionCoordinatorShard(h.shard.config, 0, () => { throw new Error('replay needs no producer id'); });
  for (const w of h.written) shard.replay(decodeTxnRecord(w.key, w.value)!);
  return shard.txns;
}

/** How often each record kind was written over all runs, to check the scenarios reach every path. */
const reached = new Map<string, number>();

function runScenario(ops: Op[]): void {
  const config = { transactionMaxTimeoutMs: 20_000, transactionalIdExpirationMs: 60_000, abortTimedOutTransactionsIntervalMs: 1000, removeExpiredTransactionalIdsIntervalMs: 5000 };
  let h = new TxnHarness(config);
  /** Every producer id+epoch each client was handed, newest last. */
  const handed = IDS.map(() => [] as { producerId: bigint; producerEpoch: number }[]);
  const owner = new Map<bigint, string>();
  const maxEpoch = new Map<bigint, number>();
  const pick = (id: number, stale: number) => { const l = handed[id]!; return l[Math.max(0, l.length - 1 - stale)]; };

  for (const op of ops) {
    switch (op.kind) {
      case 'init': {
        const cur = op.withExpected ? pick(op.id, op.stale) : undefined;
        const r = h.init(IDS[op.id], cur?.producerId ?? -1n, cur?.producerEpoch ?? -1, 10_000);
        if (r.errorCode === 0) {
          handed[op.id]!.push({ producerId: r.producerId, producerEpoch: r.producerEpoch });
          const prev = owner.get(r.producerId);
          assert.ok(prev === undefined || prev === IDS[op.id], `producer id ${r.producerId} handed to ${prev} and ${IDS[op.id]}`);
          owner.set(r.producerId, IDS[op.id]!);
        } else {
          assert.ok([ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.PRODUCER_FENCED, ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE].includes(r.errorCode as never), `init: ${r.errorCode}`);
        }
        break;
      }
      case 'add': {
        const p = pick(op.id, op.stale);
        if (p) h.add(p, op.partitions.map((n) => tp(`topic-${n % 2}`, n)), IDS[op.id], op.tv2 ? 2 : 0);
        break;
      }
      case 'offsets': {
        const p = pick(op.id, 0);
        if (p) h.addOffsets(p, `g${op.group}`, op.group, IDS[op.id]);
        break;
      }
      case 'end': {
        const p = pick(op.id, op.stale);
        if (p && op.tv2) {
          // A version 2 client continues with the producer id and epoch the answer carries.
          const r = h.endV2(p, op.commit, IDS[op.id]);
          assert.notEqual(r.errorCode, -1);
          if (r.errorCode === 0) {
            assert.ok(r.producerEpoch >= 0 && r.producerEpoch < 32767, `EndTxn v5 handed epoch ${r.producerEpoch}`);
            handed[op.id]!.push({ producerId: r.producerId, producerEpoch: r.producerEpoch });
          }
        } else if (p) {
          const code = h.end(p, op.commit, IDS[op.id]);
          assert.notEqual(code, -1);
        }
        break;
      }
      case 'markers': {
        h.writeMarkers(op.count);
        break;
      }
      case 'advance': h.advance(op.ms); break;
      case 'failNext': h.failNextAppend = op.code; break;
      case 'reload': {
        const next = h.reload();
        h.failNextAppend = null;
        h = next;
        break;
      }
    }

    // Invariants after every step.
    for (const m of h.shard.txns.values()) {
      assert.ok(m.state !== 'Dead' && m.state !== 'PrepareEpochFence', `stored ${m.state}`);
      const o = owner.get(m.producerId);
      assert.ok(o === undefined || o === m.transactionalId, `producer id ${m.producerId} of ${m.transactionalId} belongs to ${o}`);
      if (o === undefined) owner.set(m.producerId, m.transactionalId);
      const seen = maxEpoch.get(m.producerId) ?? -1;
      assert.ok(m.producerEpoch >= seen, `${m.transactionalId}: epoch ${seen} → ${m.producerEpoch}`);
      maxEpoch.set(m.producerId, m.producerEpoch);
      if (m.state === 'Ongoing') assert.ok(m.topicPartitions.length > 0);
      if (m.state === 'Empty' || m.state.startsWith('Complete')) assert.equal(m.topicPartitions.length, 0);
    }
    const replayed = replayedFrom(h);
    assert.deepEqual([...replayed.keys()].sort(), [...h.shard.txns.keys()].sort());
    for (const [id, m] of h.shard.txns) assert.deepEqual(durable(replayed.get(id)!), durable(m), `replayed ${id}`);
  }

  // Drain: with every marker written and time passing, no transaction stays open or half-done.
  for (let i = 0; i < 5; i++) {
    h.writeMarkers();
    h.advance(15_000);
  }
  h.writeMarkers();
  for (const r of h.records()) { const k = r.value?.state ?? 'tombstone'; reached.set(k, (reached.get(k) ?? 0) + 1); }
  for (const m of h.shard.txns.values()) assert.ok(!['Ongoing', 'PrepareCommit', 'PrepareAbort'].includes(m.state), `${m.transactionalId} left ${m.state}`);
}

/** Seeds that once failed go here and are replayed every run. */
const REGRESSION_SEEDS: number[] = [];

test('random operation sequences keep epochs monotonic, producer ids unique to an id, and replay equal to live state', () => {
  for (const seed of [20261203, ...REGRESSION_SEEDS]) {
    fc.assert(fc.property(fc.array(opArb, { minLength: 10, maxLength: 80, size: 'max' }), (ops) => { runScenario(ops); }), { seed, numRuns: 300 });
  }
  for (const k of ['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'tombstone']) {
    assert.ok((reached.get(k) ?? 0) > 30, `the scenarios rarely reach ${k}: ${JSON.stringify([...reached])}`);
  }
});

// Transaction verification with a coordinator on another broker (AddPartitionsToTxnManager) and
// the marker sender (TxnMarkerSender), against a scripted connection: what goes out in which
// request, and which error code each caller gets back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AddPartitionsToTxnManager } from '../../src/broker/txn-verification.js';
import { TxnMarkerSender } from '../../src/broker/txn-marker-sender.js';
import type { InterBrokerConnections } from '../../src/client/index.js';
import { ErrorCode } from '../../src/protocol/index.js';

/** A connection whose answers the test gives: each request waits until `answer` is called for it. */
class ScriptedConnection {
  readonly requests: { apiKey: number; version: number; body: any; answer: (r: any) => void; fail: (e: Error) => void }[] = [];
  version(_apiKey: number, cap = 0x7fff): number { return Math.min(5, cap); }
  send(apiKey: number, version: number, body: any): Promise<any> {
    return new Promise((answer, fail) => { this.requests.push({ apiKey, version, body, answer, fail }); });
  }
}

function connections(conn: ScriptedConnection | Error) {
  const dropped: number[] = [];
  const pool = {
    connection: async () => { if (conn instanceof Error) throw conn; return conn; },
    drop: (id: number) => { dropped.push(id); },
  } as unknown as InterBrokerConnections;
  return { pool, dropped };
}

const tick = () => new Promise((r) => setImmediate(r));

/** The AddPartitionsToTxn answer: every partition of every transaction answered `code(id, topic, partition)`. */
function answerFor(body: any, code: (id: string, topic: string, partition: number) => number) {
  return {
    throttleTimeMs: 0, errorCode: 0, resultsByTopicV3AndBelow: [],
    resultsByTransaction: body.transactions.map((x: any) => ({
      transactionalId: x.transactionalId,
      topicResults: x.topics.map((t: any) => ({ name: t.name, resultsByPartition: t.partitions.map((p: number) => ({ partitionIndex: p, partitionErrorCode: code(x.transactionalId, t.name, p) })) })),
    })),
  };
}

const check = (transactionalId: string, partitions: number[], producerEpoch = 0) =>
  ({ transactionalId, producerId: 7n, producerEpoch, partitions: partitions.map((partition) => ({ topic: 't', partition })), verifyOnly: true });

test('verifications for one coordinator broker wait while a request is in flight and go together in the next; one entry per transactional id', async () => {
  const conn = new ScriptedConnection();
  const m = new AddPartitionsToTxnManager(connections(conn).pool, () => {});
  const a = m.check(2, check('a', [0]));
  await tick();
  assert.equal(conn.requests.length, 1);
  assert.equal(conn.requests[0]!.version, 5);
  const b1 = m.check(2, check('b', [0]));
  const b2 = m.check(2, check('b', [1]));
  const c = m.check(2, check('c', [3]));
  await tick();
  assert.equal(conn.requests.length, 1, 'nothing more is sent while the first request is in flight');
  conn.requests[0]!.answer(answerFor(conn.requests[0]!.body, () => 0));
  assert.deepEqual(await a, [{ topic: 't', partition: 0, errorCode: 0 }]);
  await tick();
  assert.equal(conn.requests.length, 2);
  const second = conn.requests[1]!.body;
  assert.deepEqual(second.transactions.map((x: any) => [x.transactionalId, x.verifyOnly, x.topics[0].partitions]), [['b', true, [0, 1]], ['c', true, [3]]]);
  conn.requests[1]!.answer(answerFor(second, (id, _t, p) => (id === 'b' && p === 1 ? ErrorCode.TRANSACTION_ABORTABLE : 0)));
  assert.deepEqual(await b1, [{ topic: 't', partition: 0, errorCode: 0 }], 'each caller gets its own partitions');
  assert.deepEqual(await b2, [{ topic: 't', partition: 1, errorCode: ErrorCode.TRANSACTION_ABORTABLE }]);
  assert.deepEqual(await c, [{ topic: 't', partition: 3, errorCode: 0 }]);
});

test('a newer producer epoch replaces a waiting verification of the same transactional id (the older is told to retry); an older one is fenced', async () => {
  const conn = new ScriptedConnection();
  const m = new AddPartitionsToTxnManager(connections(conn).pool, () => {});
  const first = m.check(2, check('x', [0], 0));
  await tick();
  const old = m.check(2, check('y', [0], 3));
  const newer = m.check(2, check('y', [0], 4));
  const older = m.check(2, check('y', [0], 2));
  assert.deepEqual(await old, [{ topic: 't', partition: 0, errorCode: ErrorCode.NETWORK_EXCEPTION }]);
  assert.deepEqual(await older, [{ topic: 't', partition: 0, errorCode: ErrorCode.INVALID_PRODUCER_EPOCH }]);
  conn.requests[0]!.answer(answerFor(conn.requests[0]!.body, () => 0));
  await first;
  await tick();
  assert.deepEqual(conn.requests[1]!.body.transactions.map((x: any) => [x.transactionalId, x.producerEpoch]), [['y', 4]]);
  conn.requests[1]!.answer(answerFor(conn.requests[1]!.body, () => 0));
  assert.deepEqual(await newer, [{ topic: 't', partition: 0, errorCode: 0 }]);
});

test('a coordinator broker that cannot be reached: NETWORK_EXCEPTION for every partition, and the connection is dropped', async () => {
  const { pool, dropped } = connections(new Error('connect ECONNREFUSED'));
  const m = new AddPartitionsToTxnManager(pool, () => {});
  assert.deepEqual(await m.check(3, check('z', [0, 1])), [
    { topic: 't', partition: 0, errorCode: ErrorCode.NETWORK_EXCEPTION }, { topic: 't', partition: 1, errorCode: ErrorCode.NETWORK_EXCEPTION }]);
  assert.deepEqual(dropped, [3]);
});

test('markers: partitions led here are written locally, the others in one WriteTxnMarkers per leader; leaderless, deleted and unreachable ones answer an error', async () => {
  const conn = new ScriptedConnection();
  const leaders: Record<string, number> = { 't-0': 1, 't-1': 2, 't-2': 2, 't-3': -1 };
  const local: any[] = [];
  const sender = new TxnMarkerSender({
    nodeId: 1, connections: connections(conn).pool, warn: () => {},
    leaderOf: (topic, partition) => leaders[`${topic}-${partition}`],
    writeLocal: async (m) => { local.push(m); return m.partitions.map((tp) => ({ ...tp, errorCode: 0 })); },
  });
  const m = { producerId: 9n, producerEpoch: 1, coordinatorEpoch: 4, commit: true, partitions: [0, 1, 2, 3, 4].map((partition) => ({ topic: 't', partition })) };
  const sent = sender.send(m);
  await tick();
  assert.deepEqual(local.map((x) => x.partitions), [[{ topic: 't', partition: 0 }]]);
  assert.equal(conn.requests.length, 1);
  assert.equal(conn.requests[0]!.apiKey, 27);
  assert.deepEqual(conn.requests[0]!.body.markers, [{ producerId: 9n, producerEpoch: 1, transactionResult: true, coordinatorEpoch: 4, topics: [{ name: 't', partitionIndexes: [1, 2] }] }]);
  conn.requests[0]!.answer({ markers: [{ producerId: 9n, topics: [{ name: 't', partitions: [{ partitionIndex: 1, errorCode: 0 }, { partitionIndex: 2, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER }] }] }] });
  const results = await sent;
  const byPartition = Object.fromEntries(results.map((r) => [r.partition, r.errorCode]));
  assert.deepEqual(byPartition, { 0: 0, 1: 0, 2: ErrorCode.NOT_LEADER_OR_FOLLOWER, 3: ErrorCode.LEADER_NOT_AVAILABLE, 4: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
});

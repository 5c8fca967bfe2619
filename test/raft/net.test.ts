import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRequest as decodeFrame, decodeResponse as decodeResponseFrame, encodeRequestFrame, encodeResponseFrame } from '../../src/protocol/index.js';
import { SocketTransport, batchesOf, entriesOf, makeBatch, parseQuorumVoters, raftWire, type Entry, type RaftMessage, type RaftRequest } from '../../src/raft/index.js';
import { BrokerConnection } from '../../src/client/index.js';
import { NO_TIMESTAMP, buildRecordBatchSync } from '../../src/records/index.js';

const ctx = { clusterId: 'c1', to: 2, host: '127.0.0.1', port: 9093 };
const enc = new TextEncoder();
const dec = new TextDecoder();

function overTheWire(request: RaftRequest): { from: number; message: RaftRequest } {
  const apiKey = raftWire.apiKeyOf(request.type);
  const frame = Buffer.concat(encodeRequestFrame(apiKey, raftWire.apiVersion[apiKey]!, 7, 'raft-1', raftWire.encodeRequest(request, ctx)));
  const decoded = decodeFrame(frame.subarray(4));
  assert.equal(decoded.header.requestApiKey, apiKey);
  const r = raftWire.decodeRequest(apiKey, decoded.body);
  assert.equal(r.clusterId, 'c1');
  return r;
}

function answerOverTheWire(request: RaftRequest, response: RaftMessage): RaftMessage {
  const apiKey = raftWire.apiKeyOf(request.type);
  const version = raftWire.apiVersion[apiKey]!;
  const frame = Buffer.concat(encodeResponseFrame(apiKey, version, 7, raftWire.encodeResponse(response)));
  return raftWire.decodeResponse(request, decodeResponseFrame(apiKey, version, frame.subarray(4)).body, 1 << 20);
}

test('Vote and pre-vote requests and their answers survive Kafka framing', () => {
  for (const preVote of [false, true]) {
    const req: RaftRequest = { type: 'VoteRequest', candidateEpoch: 5, candidateId: 1, lastOffsetEpoch: 4, lastOffset: 123, preVote };
    assert.deepEqual(overTheWire(req), { from: 1, message: req, clusterId: 'c1' });
    const resp: RaftMessage = { type: 'VoteResponse', errorCode: 0, leaderEpoch: 5, leaderId: undefined, voteGranted: true, preVote, candidateEpoch: 5 };
    assert.deepEqual(answerOverTheWire(req, resp), resp);
  }
});

test('BeginQuorumEpoch and EndQuorumEpoch survive Kafka framing', () => {
  const begin: RaftRequest = { type: 'BeginQuorumEpochRequest', leaderEpoch: 3, leaderId: 1 };
  assert.deepEqual(overTheWire(begin).message, begin);
  const end: RaftRequest = { type: 'EndQuorumEpochRequest', leaderEpoch: 3, leaderId: 1, preferredSuccessors: [3, 2] };
  assert.deepEqual(overTheWire(end).message, end);
  const resp: RaftMessage = { type: 'EndQuorumEpochResponse', errorCode: 74, leaderEpoch: 4, leaderId: 3 };
  assert.deepEqual(answerOverTheWire(end, resp), resp);
});

test('Fetch carries entries as record batches (data and control, several epochs), diverging epochs and snapshot ids', () => {
  const req: RaftRequest = { type: 'FetchRequest', replicaId: 2, replicaEpoch: 3, fetchOffset: 10, lastFetchedEpoch: 2, maxWaitMs: 500 };
  assert.deepEqual(overTheWire(req), { from: 2, message: req, clusterId: 'c1' });
  const entries: Entry[] = [
    { offset: 10, epoch: 2, kind: 'data', value: enc.encode('a') },
    { offset: 11, epoch: 3, kind: 'control', value: enc.encode('{"leaderId":1}') },
    { offset: 12, epoch: 3, kind: 'data', value: enc.encode('b') },
    { offset: 13, epoch: 3, kind: 'data', value: new Uint8Array(0) },
  ];
  const resp = answerOverTheWire(req, {
    type: 'FetchResponse', errorCode: 0, leaderEpoch: 3, leaderId: 1, highWatermark: 12, logStartOffset: 0, batches: batchesOf(entries),
  });
  assert.equal(resp.type, 'FetchResponse');
  if (resp.type !== 'FetchResponse') return;
  assert.deepEqual(entriesOf(resp.batches).map((e) => ({ ...e, value: Buffer.from(e.value).toString() })),
    entries.map((e) => ({ ...e, value: Buffer.from(e.value).toString() })));
  assert.equal(resp.divergingEpoch, undefined);
  assert.equal(resp.snapshotId, undefined);
  const diverging = answerOverTheWire(req, {
    type: 'FetchResponse', errorCode: 0, leaderEpoch: 3, leaderId: 1, highWatermark: 12, logStartOffset: 0, batches: [],
    divergingEpoch: { epoch: 1, endOffset: 8 },
  });
  assert.deepEqual(diverging.type === 'FetchResponse' && diverging.divergingEpoch, { epoch: 1, endOffset: 8 });
  const snap = answerOverTheWire(req, {
    type: 'FetchResponse', errorCode: 0, leaderEpoch: 3, leaderId: undefined, highWatermark: 12, logStartOffset: 20, batches: [],
    snapshotId: { endOffset: 20, epoch: 3 },
  });
  assert.deepEqual(snap.type === 'FetchResponse' && [snap.snapshotId, snap.leaderId], [{ endOffset: 20, epoch: 3 }, undefined]);
});

test('FetchSnapshot chunks survive Kafka framing', () => {
  const req: RaftRequest = { type: 'FetchSnapshotRequest', replicaId: 3, replicaEpoch: 4, snapshotId: { endOffset: 20, epoch: 3 }, position: 256, maxBytes: 256 };
  assert.deepEqual(overTheWire(req).message, req);
  const resp: RaftMessage = {
    type: 'FetchSnapshotResponse', errorCode: 0, leaderEpoch: 4, leaderId: 1, snapshotId: { endOffset: 20, epoch: 3 }, size: 600, position: 256,
    bytes: new Uint8Array([1, 2, 3]),
  };
  const back = answerOverTheWire(req, resp);
  assert.deepEqual({ ...back, bytes: [...(back as typeof resp).bytes] }, { ...resp, bytes: [1, 2, 3] });
});

test('a fetch response with more entries than the limit is refused', () => {
  const entries: Entry[] = Array.from({ length: 5 }, (_, i) => ({ offset: i, epoch: 1, kind: 'data' as const, value: enc.encode(`v${i}`) }));
  const records = raftWire.encodeEntries(batchesOf(entries));
  assert.equal(entriesOf(raftWire.decodeEntries(records, 5)).length, 5);
  assert.throws(() => raftWire.decodeEntries(records, 4), raftWire.WireError);
});

test('encoded entry ranges are cached per node: two quorums with the same (offset, epoch) keys get their own bytes', () => {
  const range = (prefix: string): Entry[] => [0, 1].map((i) => ({ offset: i, epoch: 1, kind: 'data' as const, value: enc.encode(`${prefix}${i}`) }));
  // Two batches, so the range is cached (a single batch is encoded directly).
  const a = [...batchesOf(range('a').slice(0, 1)), ...batchesOf(range('a').slice(1))];
  const b = [...batchesOf(range('b').slice(0, 1)), ...batchesOf(range('b').slice(1))];
  const nodeA = new raftWire.EncodedRanges();
  const nodeB = new raftWire.EncodedRanges();
  const values = (bytes: Buffer) => entriesOf(raftWire.decodeEntries(bytes, 10)).map((e) => dec.decode(e.value));
  assert.deepEqual(values(nodeA.encode(a)), ['a0', 'a1']);
  assert.deepEqual(values(nodeB.encode(b)), ['b0', 'b1']);
  assert.equal(nodeA.encode(a), nodeA.encode(a), 'the second follower of the same range gets the cached bytes');
});

test('controller.quorum.voters is parsed as id@host:port and bad entries are refused', () => {
  assert.deepEqual(parseQuorumVoters('1@127.0.0.1:9093, 2@127.0.0.1:9094,3@[::1]:9095'), [
    { nodeId: 1, host: '127.0.0.1', port: 9093 }, { nodeId: 2, host: '127.0.0.1', port: 9094 }, { nodeId: 3, host: '::1', port: 9095 },
  ]);
  for (const bad of ['', '1@127.0.0.1', 'x@h:1', '1@h:70000', '1@h:1,1@h:2']) assert.throws(() => parseQuorumVoters(bad), bad);
});

test('an entry batch encodes to the same RecordBatch v2 bytes as the records builder: data, leader change and voters', () => {
  const values = ['a', '', 'x'.repeat(300), 'last'].map((v) => enc.encode(v));
  for (const kind of ['data', 'control', 'voters'] as const) {
    const batch = makeBatch(1_000_000, 7, kind, kind === 'data' ? values : [values[3]!]);
    // Kafka's ControlRecordType: LEADER_CHANGE 2, KRAFT_VOTERS 6.
    const key = Buffer.from([0, 0, 0, kind === 'voters' ? 6 : 2]);
    const expected = buildRecordBatchSync({
      records: entriesOf([batch]).map((e) => ({ key: kind === 'data' ? null : key, value: Buffer.from(e.value), timestamp: NO_TIMESTAMP })),
      baseOffset: 1_000_000, partitionLeaderEpoch: 7, isControl: kind !== 'data', baseTimestamp: NO_TIMESTAMP,
      producerId: -1, producerEpoch: -1, baseSequence: -1,
    });
    assert.deepEqual(raftWire.encodeBatch(batch), expected);
    const back = raftWire.decodeEntries(expected, 100);
    assert.equal(back.length, 1);
    assert.equal(back[0]!.recordBatch, true);
    assert.deepEqual(entriesOf(back).map((e) => [e.offset, e.epoch, e.kind, dec.decode(e.value)]),
      entriesOf([batch]).map((e) => [e.offset, e.epoch, e.kind, dec.decode(e.value)]));
  }
});

test('controller APIs on the quorum listener are answered in the order they came on a connection, whatever order their handler finishes in', async () => {
  const transport = new SocketTransport({ nodeId: 1, clusterId: 'c1', host: '127.0.0.1', port: 0, voters: [], requestTimeoutMs: 1000 });
  const inbox = { deliver() {}, requestFailed() {}, describeQuorum: () => ({ description: { leaderId: 1, leaderEpoch: 1, highWatermark: 0, voters: [], observers: [] }, errorCode: 0 }) };
  await transport.start(inbox as never);
  // The first request's answer is held until the second's has been produced.
  let releaseFirst!: () => void;
  const firstHeld = new Promise<void>((r) => { releaseFirst = r; });
  transport.serveOtherRequests(async (header) => {
    if (header.correlationId === 1) await firstHeld;
    else setImmediate(releaseFirst);
    return encodeResponseFrame(18, 0, header.correlationId, { errorCode: 0, apiKeys: [], throttleTimeMs: 0 });
  });
  const conn = await BrokerConnection.open({ host: '127.0.0.1', port: transport.port, requestTimeoutMs: 5000 });
  try {
    const answers = await Promise.all([conn.send(18, 0, {}), conn.send(18, 0, {})]);
    assert.deepEqual(answers.map((a: { errorCode: number }) => a.errorCode), [0, 0]);
  } finally {
    conn.close();
    await transport.close();
  }
});

test('DescribeQuorum on a connection whose controller API request is still being handled is answered after it, in turn', async () => {
  const transport = new SocketTransport({ nodeId: 1, clusterId: 'c1', host: '127.0.0.1', port: 0, voters: [], requestTimeoutMs: 1000 });
  let asked!: () => void;
  const quorumAsked = new Promise<void>((r) => { asked = r; });
  const inbox = {
    deliver() {}, requestFailed() {},
    describeQuorum: () => { asked(); return { description: { leaderId: 1, leaderEpoch: 4, highWatermark: 0, voters: [], observers: [] }, errorCode: 0 }; },
  };
  await transport.start(inbox as never);
  // A broker's heartbeat waits on the controller (as on one cut off from the quorum) while a
  // DescribeQuorum it forwards for a client follows on the same connection.
  let releaseHeartbeat!: () => void;
  const heartbeatHeld = new Promise<void>((r) => { releaseHeartbeat = r; });
  transport.serveOtherRequests(async (header) => {
    await heartbeatHeld;
    return encodeResponseFrame(18, 0, header.correlationId, { errorCode: 0, apiKeys: [], throttleTimeMs: 0 });
  });
  const conn = await BrokerConnection.open({ host: '127.0.0.1', port: transport.port, requestTimeoutMs: 5000 });
  try {
    const order: string[] = [];
    const held = conn.send(18, 0, {}).then((a: { errorCode: number }) => { order.push('held'); return a; });
    const quorum = conn.send(55, 2, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] })
      .then((a: { topics: { partitions: { leaderEpoch: number }[] }[] }) => { order.push('describeQuorum'); return a; });
    // The DescribeQuorum's answer is made (at once) before the heartbeat's.
    await quorumAsked;
    releaseHeartbeat();
    // An answer out of order broke the connection, and the client never settled the held request.
    let timer: NodeJS.Timeout | undefined;
    const leftWaiting = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('a request was left waiting')), 10_000); });
    const [h, q] = await Promise.race([Promise.all([held, quorum]), leftWaiting]).finally(() => clearTimeout(timer));
    assert.equal(h.errorCode, 0);
    assert.equal(q.topics[0]!.partitions[0]!.leaderEpoch, 4);
    assert.deepEqual(order, ['held', 'describeQuorum']);
  } finally {
    conn.close();
    await transport.close();
  }
});

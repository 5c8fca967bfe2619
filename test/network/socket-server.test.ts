import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { BrokerConnection } from '../../src/client/index.js';
import { decodeResponse, encodeRequestFrame, ErrorCode, FrameSplitter, ZERO_UUID } from '../../src/protocol/index.js';
import { Prng } from '../../src/util/index.js';

async function withServer(fn: (s: ServerHandle) => Promise<void>, limits = {}): Promise<void> {
  const s = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], limits, bare: true });
  try { await fn(s); } finally { await s.close(); }
}

const open = (s: ServerHandle) => BrokerConnection.open({ host: '127.0.0.1', port: s.listeners[0]!.port, requestTimeoutMs: 5000 });

function rawSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: '127.0.0.1', port }, () => resolve(sock));
    sock.on('error', reject);
  });
}

/** Resolves with everything the server sent once it closes the socket (or after `ms`). */
function drain(sock: Socket, ms: number): Promise<{ data: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    sock.on('data', (d) => parts.push(d));
    const timer = setTimeout(() => { resolve({ data: Buffer.concat(parts), closed: false }); sock.destroy(); }, ms);
    sock.on('close', () => { clearTimeout(timer); resolve({ data: Buffer.concat(parts), closed: true }); });
  });
}

test('ApiVersions lists exactly the registered handlers', async () => {
  await withServer(async (s) => {
    const c = await open(s);
    const r = await c.send(18, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1.0' });
    assert.equal(r.errorCode, 0);
    assert.deepEqual(r.apiKeys.find((k: any) => k.apiKey === 18), { apiKey: 18, minVersion: 0, maxVersion: 4 });
    assert.deepEqual(r.apiKeys.map((k: any) => k.apiKey), s.router.supportedVersions().map((k) => k.apiKey));
    const bad = await c.send(18, 3, { clientSoftwareName: '-bad-', clientSoftwareVersion: '1.0' });
    assert.equal(bad.errorCode, ErrorCode.INVALID_REQUEST);
    c.close();
  });
});

test('a too-new ApiVersions gets UNSUPPORTED_VERSION in v0 with the supported list', async () => {
  await withServer(async (s) => {
    const sock = await rawSocket(s.listeners[0]!.port);
    // Version 99 with a v2 header: the server can only read the fixed part, which is enough.
    const frame = Buffer.from([0, 0, 0, 10, 0, 18, 0, 99, 0, 0, 0, 7, 0xff, 0xff]);
    const done = drain(sock, 500);
    sock.write(frame);
    const { data } = await done;
    const body = decodeResponse(18, 0, data.subarray(4)).body as any;
    assert.equal(data.readInt32BE(4), 7);
    assert.equal(body.errorCode, ErrorCode.UNSUPPORTED_VERSION);
    assert.ok(body.apiKeys.some((k: any) => k.apiKey === 18 && k.maxVersion === 4));
  });
});

test('pipelined requests are answered in order even when handlers finish out of order', async () => {
  await withServer(async (s) => {
    const prng = new Prng(7);
    s.router.intercept(18, async () => {
      await new Promise((r) => setTimeout(r, prng.int(20)));
      return undefined; // fall through to the real handler
    });
    const c = await open(s);
    const answers = await Promise.all(Array.from({ length: 60 }, () => c.send(18, 2, {})));
    assert.equal(answers.length, 60);
    assert.ok(answers.every((a) => a.errorCode === 0));
    c.close();
  });
});

test('a Metadata request pipelined behind one still being handled answers with what the broker knows once that one is answered, as Kafka', async () => {
  const { ClusterClient } = await import('../../src/client/index.js');
  const s = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'] });
  const admin = new ClusterClient({ bootstrap: `127.0.0.1:${s.listeners[0]!.port}`, requestTimeoutMs: 5000 });
  try {
    const c = await open(s);
    // The first ApiVersions from here on stands for a produce waiting for acks=all.
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    let holding = true;
    s.router.intercept(18, async () => {
      if (holding) { holding = false; await held; }
      return undefined;
    });
    const slow = c.send(18, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1.0' });
    const answer = c.send(3, 12, { topics: [{ name: 'born-meanwhile', topicId: ZERO_UUID }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    // Meanwhile, on another connection, the topic comes to be.
    const created = await admin.admin(19, { topics: [{ name: 'born-meanwhile', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, 0);
    release();
    assert.equal((await slow).errorCode, 0);
    const md = await answer;
    assert.equal(md.topics[0].errorCode, ErrorCode.NONE, 'the answer sent after the topic was created names it');
    assert.equal(md.topics[0].partitions.length, 1);
    c.close();
  } finally {
    admin.close();
    await s.close();
  }
});

test('garbage, hostile sizes, unknown APIs and half frames close the connection; the server keeps serving', async () => {
  await withServer(async (s) => {
    const port = s.listeners[0]!.port;
    const prng = new Prng(99);
    const random = Buffer.alloc(4096);
    for (let i = 0; i < random.length; i++) random[i] = prng.int(256);
    const cases: [string, Buffer][] = [
      ['random bytes', random],
      ['huge size', Buffer.from([0x7f, 0xff, 0xff, 0xff, 1, 2, 3])],
      ['negative size', Buffer.from([0xff, 0xff, 0xff, 0xf0])],
      ['truncated header', Buffer.from([0, 0, 0, 3, 0, 18, 0])],
      ['unknown api key', Buffer.from([0, 0, 0, 10, 0x7f, 0x00, 0, 0, 0, 0, 0, 1, 0xff, 0xff])],
      ['unknown version of a known api', Buffer.from([0, 0, 0, 10, 0, 3, 0x7f, 0, 0, 0, 0, 1, 0xff, 0xff])],
      ['malformed body', Buffer.concat([Buffer.from([0, 0, 0, 14, 0, 3, 0, 1, 0, 0, 0, 1, 0xff, 0xff]), Buffer.from([0x7f, 0xff, 0xff, 0xff])])],
    ];
    for (const [name, bytes] of cases) {
      const sock = await rawSocket(port);
      const done = drain(sock, 2000);
      sock.write(bytes);
      const { closed } = await done;
      assert.ok(closed, `${name}: connection should be closed`);
    }
    const c = await open(s);
    assert.equal((await c.send(18, 0, {})).errorCode, 0);
    c.close();
  }, { requestBytesMax: 1024 * 1024 });
});

test('half a frame then silence is closed by connections.max.idle.ms', async () => {
  await withServer(async (s) => {
    const sock = await rawSocket(s.listeners[0]!.port);
    const done = drain(sock, 3000);
    sock.write(Buffer.from([0, 0, 0, 100, 0, 18]));
    const { closed } = await done;
    assert.ok(closed);
  }, { idleMs: 200 });
});

test('1,000 idle connections do not stop a real client, and max.connections.per.ip is enforced', async () => {
  await withServer(async (s) => {
    const port = s.listeners[0]!.port;
    const heapBefore = process.memoryUsage().heapUsed;
    const idle = await Promise.all(Array.from({ length: 1000 }, () => rawSocket(port)));
    const c = await open(s);
    const r = await c.send(18, 1, {});
    assert.equal(r.errorCode, 0);
    assert.ok(process.memoryUsage().heapUsed - heapBefore < 200 * 1024 * 1024);
    // Every allowed connection counted first, so the next one is the one over the limit.
    for (let i = 0; i < 3000 && s.stats.connectionsOpen < 1001; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(s.stats.connectionsOpen, 1001);
    // One more connection than allowed is closed (the wait only bounds a broken server: a close ends it).
    const extra = await rawSocket(port);
    const { closed } = await drain(extra, 30_000);
    assert.ok(closed, 'connection over max.connections.per.ip must be closed');
    assert.ok(s.stats.connectionsRejected >= 1);
    for (const sock of idle) sock.destroy();
    c.close();
  }, { connectionsPerIpMax: 1001 });
});

test('a request larger than socket.request.max.bytes closes the connection', async () => {
  await withServer(async (s) => {
    const sock = await rawSocket(s.listeners[0]!.port);
    const done = drain(sock, 2000);
    const frame = Buffer.concat(encodeRequestFrame(18, 0, 1, 'x', {}));
    frame.writeInt32BE(2048, 0);
    sock.write(Buffer.concat([frame, Buffer.alloc(2048)]));
    assert.ok((await done).closed);
  }, { requestBytesMax: 1024 });
});

test('after garbage from many connections the full broker still produces and fetches correctly', async () => {
  const { ClusterClient } = await import('../../src/client/index.js');
  const { buildRecordBatch, iterateBatches, readRecords } = await import('../../src/records/index.js');
  const s = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'] });
  try {
    const port = s.listeners[0]!.port;
    const prng = new Prng(5);
    const rssBefore = process.memoryUsage().rss;
    for (let i = 0; i < 200; i++) {
      const sock = await rawSocket(port);
      const junk = Buffer.alloc(1 + prng.int(2000));
      for (let j = 0; j < junk.length; j++) junk[j] = prng.int(256);
      // Some frames carry a plausible header (Produce/Fetch/Metadata) and a corrupt body.
      if (i % 2 === 0 && junk.length > 12) { junk.writeInt32BE(junk.length - 4, 0); junk.writeInt16BE([0, 1, 3][i % 3]!, 4); junk.writeInt16BE(prng.int(12), 6); }
      const done = drain(sock, 300);
      sock.write(junk);
      await done;
    }
    assert.ok(process.memoryUsage().rss - rssBefore < 256 * 1024 * 1024, 'memory stays bounded');
    const client = new ClusterClient({ bootstrap: `127.0.0.1:${port}` });
    const created = await client.admin(19, { topics: [{ name: 'after-garbage', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, 0);
    const conn = await client.leaderFor('after-garbage', 0);
    const batch = await buildRecordBatch({ records: [{ key: Buffer.from('k'), value: Buffer.from('still here') }] });
    const produced = await conn.send(0, 9, { transactionalId: null, acks: -1, timeoutMs: 1000, topicData: [{ name: 'after-garbage', partitionData: [{ index: 0, records: batch }] }] });
    assert.equal(produced.responses[0].partitionResponses[0].errorCode, 0);
    const fetched = await conn.send(1, 12, {
      replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: 'after-garbage', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
      forgottenTopicsData: [], rackId: '',
    });
    const [view] = [...iterateBatches(fetched.responses[0].partitions[0].records)];
    const [record] = await readRecords(view!);
    assert.equal(record!.value!.toString(), 'still here');
    assert.equal(s.stats.handlerErrors, 0, 'no handler threw');
    client.close();
  } finally {
    await s.close();
  }
});

test('close() returns promptly while idle clients are still connected', async () => {
  const s = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], bare: true });
  const idle = await Promise.all(Array.from({ length: 5 }, () => rawSocket(s.listeners[0]!.port)));
  const started = Date.now();
  await s.close();
  assert.ok(Date.now() - started < 2000, `close took ${Date.now() - started} ms`);
  for (const sock of idle) sock.destroy();
});

test('fetched bytes queued for a slow reader stay intact while other fetches reuse the response memory', async () => {
  const { ClusterClient } = await import('../../src/client/index.js');
  const { buildRecordBatch, iterateBatches, readRecords } = await import('../../src/records/index.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'logline-network-'));
  const s = await startServer({ dataDir, listeners: ['PLAINTEXT://127.0.0.1:0'] });
  const port = s.listeners[0]!.port;
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${port}` });
  try {
    // Two topics of 8 partitions, each partition ~900 KiB of records filled with its own byte.
    const fill = (topic: string, p: number) => (topic === 'slow' ? 1 : 101) + p;
    for (const topic of ['slow', 'fast']) {
      const created = await client.admin(19, { topics: [{ name: topic, numPartitions: 8, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false }, 7);
      assert.equal(created.topics[0].errorCode, 0);
      const conn = await client.leaderFor(topic, 0);
      for (let p = 0; p < 8; p++) {
        const records = Array.from({ length: 9 }, () => ({ key: null, value: Buffer.alloc(100 * 1024, fill(topic, p)) }));
        const produced = await conn.send(0, 9, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: p, records: await buildRecordBatch({ records }) }] }] });
        assert.equal(produced.responses[0].partitionResponses[0].errorCode, 0);
      }
    }
    const fetchBody = (topic: string) => ({
      replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 64 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic, partitions: Array.from({ length: 8 }, (_, p) => ({ partition: p, currentLeaderEpoch: -1, fetchOffset: 0n, logStartOffset: -1n, partitionMaxBytes: 1 << 20 })) }],
      forgottenTopicsData: [], rackId: '',
    });
    const fetchFrame = (topic: string, correlationId: number) => Buffer.concat(encodeRequestFrame(1, 12, correlationId, 'test', fetchBody(topic)));
    const checkResponse = async (frame: Buffer, topic: string) => {
      const { body } = decodeResponse(1, 12, frame) as { body: any };
      for (const part of body.responses[0].partitions) {
        const [view] = [...iterateBatches(part.records)];
        for (const r of await readRecords(view!)) assert.ok(r.value!.every((x) => x === fill(topic, part.partitionIndex)), `${topic}-${part.partitionIndex} intact`);
      }
    };
    // The slow reader asks for ~7 MiB twelve times and reads nothing: beyond the ~36 MiB the kernel
    // buffers on loopback, the responses wait in the broker, in leased memory.
    const slow = await rawSocket(port);
    slow.pause();
    slow.write(Buffer.concat(Array.from({ length: 12 }, (_, i) => fetchFrame('slow', i + 1))));
    await new Promise((r) => setTimeout(r, 300));
    // Meanwhile other fetches read other bytes through the same pool.
    const fast = await client.leaderFor('fast', 0);
    for (let i = 0; i < 5; i++) {
      const r = await fast.send(1, 12, fetchBody('fast'));
      for (const part of r.responses[0].partitions) {
        for (const b of iterateBatches(part.records)) for (const rec of await readRecords(b)) assert.ok(rec.value!.every((x: number) => x === fill('fast', part.partitionIndex)));
      }
    }
    // Now read the slow responses: every byte is what its partition holds.
    const frames: Buffer[] = [];
    const splitter = new FrameSplitter(256 << 20);
    await new Promise<void>((resolve, reject) => {
      slow.on('data', (d) => { frames.push(...splitter.push(d)); if (frames.length === 12) resolve(); });
      slow.on('error', reject);
      slow.resume();
    });
    slow.destroy();
    for (const f of frames) await checkResponse(f, 'slow');
    const allocated = s.stats.responseSlabsAllocated;
    assert.ok(allocated >= 8 && allocated < 17 * 8, `slabs were reused (${allocated} allocated for 136 partition reads)`);
    assert.equal(s.stats.handlerErrors, 0);
  } finally {
    client.close();
    await s.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});


test('a client reads responses to reuseResponseBuffer requests into one buffer, one such request at a time', async () => {
  const { ClusterClient } = await import('../../src/client/index.js');
  const { buildRecordBatch, iterateBatches, readRecords } = await import('../../src/records/index.js');
  const s = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'] });
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${s.listeners[0]!.port}` });
  try {
    const created = await client.admin(19, { topics: [{ name: 'reuse', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, 0);
    const conn = await client.leaderFor('reuse', 0);
    for (const p of [0, 1]) {
      const records = await buildRecordBatch({ records: Array.from({ length: 6 }, () => ({ key: null, value: Buffer.alloc(100 * 1024, 7 + p) })) });
      await conn.send(0, 9, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'reuse', partitionData: [{ index: p, records }] }] });
    }
    const fetch = (p: number) => conn.send(1, 12, {
      replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: 'reuse', partitions: [{ partition: p, currentLeaderEpoch: -1, fetchOffset: 0n, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
      forgottenTopicsData: [], rackId: '',
    }, { reuseResponseBuffer: true });
    const buffers: ArrayBufferLike[] = [];
    for (const p of [0, 1, 0]) {
      const first = fetch(p);
      await assert.rejects(fetch(p), /already in flight/);
      const r = await first;
      const bytes: Buffer = r.responses[0].partitions[0].records;
      buffers.push(bytes.buffer);
      for (const b of iterateBatches(bytes)) for (const rec of await readRecords(b)) assert.ok(rec.value!.every((x: number) => x === 7 + p));
    }
    assert.ok(buffers.every((b) => b === buffers[0]), 'one buffer for all three responses');
  } finally {
    client.close();
    await s.close();
  }
});

test('a response that cannot be encoded closes only its connection, and the server keeps serving', async () => {
  const s = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'] });
  const unhandled: unknown[] = [];
  const onRejection = (e: unknown) => { unhandled.push(e); };
  process.on('unhandledRejection', onRejection);
  try {
    // Metadata answered with a topic id that is not a UUID: the encoder refuses it (a handler bug).
    s.router.intercept(3, () => ({ throttleTimeMs: 0, brokers: [], clusterId: null, controllerId: 1, topics: [{ errorCode: 0, name: 'x', topicId: 'nope', isInternal: false, partitions: [], topicAuthorizedOperations: 0 }] }));
    const bad = await open(s);
    await assert.rejects(bad.send(3, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }), /closed/);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(unhandled, [], 'no unhandled rejection');
    assert.equal(s.stats.handlerErrors, 1);
    s.router.intercept(3, null);
    const good = await open(s);
    const r = await good.send(3, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    assert.equal(r.brokers.length, 1);
    good.close();
  } finally {
    process.off('unhandledRejection', onRejection);
    await s.close();
  }
});

// Topic auto-creation as clients meet it: many connections asking for the same new topics at
// once get one creation and normal answers, and names Kafka refuses are answered with
// INVALID_TOPIC_EXCEPTION at once instead of being retried until a timeout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tempDataDir } from './process-helpers.js';
import { startServer } from '../../src/node/index.js';
import type { LogMetadata } from '../../src/node/metadata-log.js';
import { BrokerConnection } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { buildRecordBatch } from '../../src/records/index.js';

const CREATORS = 24;

test('concurrent auto-creations of the same topics from many connections: one creation each, every request answered', async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir(), config: parseBrokerConfig({ 'node.id': '1', 'num.partitions': '3', listeners: 'PLAINTEXT://127.0.0.1:0' }) });
  const port = server.listeners[0]!.port;
  const conns = await Promise.all(Array.from({ length: CREATORS }, () => BrokerConnection.open({ host: '127.0.0.1', port })));
  try {
    const names = ['race-a', 'race-b', 'race-c'];
    // Every connection asks for all three (in a different order), as one client's connections do.
    const answers = await Promise.all(conns.map((c, i) => c.send(ApiKey.Metadata, 12, {
      topics: [...names.slice(i % 3), ...names.slice(0, i % 3)].map((name) => ({ name, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' })),
      allowAutoTopicCreation: true, includeTopicAuthorizedOperations: false,
    })));
    for (const a of answers) {
      for (const t of a.topics) assert.ok(t.errorCode === 0 || t.errorCode === ErrorCode.LEADER_NOT_AVAILABLE, `${t.name}: error ${t.errorCode}`);
    }
    // Every connection is still usable, and each topic exists once with its partitions.
    const after = await Promise.all(conns.map((c) => c.send(ApiKey.Metadata, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false })));
    for (const a of after) {
      const race = a.topics.filter((t: { name: string }) => t.name.startsWith('race-')).map((t: { name: string; partitions: unknown[] }) => `${t.name}/${t.partitions.length}`).sort();
      assert.deepEqual(race, ['race-a/3', 'race-b/3', 'race-c/3']);
    }
    // Produce to a new topic from all connections at once (librdkafka's auto-create path is Metadata, then Produce).
    const records = await buildRecordBatch({ records: [{ value: Buffer.from('x') }] });
    const produced = await Promise.all(conns.map(async (c) => {
      await c.send(ApiKey.Metadata, 12, { topics: [{ name: 'race-produce', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], allowAutoTopicCreation: true, includeTopicAuthorizedOperations: false });
      return c.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: 'race-produce', partitionData: [{ index: 0, records }] }] });
    }));
    const offsets = produced.map((r) => { assert.equal(r.responses[0].partitionResponses[0].errorCode, 0); return r.responses[0].partitionResponses[0].baseOffset; });
    assert.deepEqual([...offsets].sort((a, b) => Number(a - b)), Array.from({ length: CREATORS }, (_, i) => BigInt(i)));
  } finally {
    for (const c of conns) c.close();
    await server.close();
  }
});

test('names Kafka refuses get INVALID_TOPIC_EXCEPTION from Metadata (with and without auto-creation) and Produce', async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const conn = await BrokerConnection.open({ host: '127.0.0.1', port: server.listeners[0]!.port });
  try {
    const bad = ['bad$name!', 'x'.repeat(250), '.', '..', 'has space'];
    for (const allowAutoTopicCreation of [true, false]) {
      const r = await conn.send(ApiKey.Metadata, 12, { topics: bad.map((name) => ({ name, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' })), allowAutoTopicCreation, includeTopicAuthorizedOperations: false });
      assert.deepEqual(r.topics.map((t: { errorCode: number }) => t.errorCode), bad.map(() => ErrorCode.INVALID_TOPIC_EXCEPTION));
    }
    const old = await conn.send(ApiKey.Metadata, 1, { topics: [{ name: 'bad$name!', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], allowAutoTopicCreation: true, includeTopicAuthorizedOperations: false });
    assert.equal(old.topics[0].errorCode, ErrorCode.INVALID_TOPIC_EXCEPTION, 'v1 auto-creates always, and still refuses the name');
    const records = await buildRecordBatch({ records: [{ value: Buffer.from('x') }] });
    const produced = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: bad.map((name) => ({ name, partitionData: [{ index: 0, records }] })) });
    assert.deepEqual(produced.responses.map((t: { partitionResponses: { errorCode: number }[] }) => t.partitionResponses[0]!.errorCode), bad.map(() => ErrorCode.INVALID_TOPIC_EXCEPTION));
    const all = await conn.send(ApiKey.Metadata, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    assert.deepEqual(all.topics.filter((t: { name: string }) => bad.includes(t.name)), [], 'nothing was created');
  } finally {
    conn.close();
    await server.close();
  }
});

test('controller operations validate against the latest state: concurrent creations through a slow metadata commit give one topic', async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'] });
  const broker = server.broker!;
  const real = broker.deps.metadata as LogMetadata;
  // A metadata commit that takes real time, as a Raft commit across the network or a slow fsync
  // does: every creation request starts before any earlier one has committed.
  const propose = real.propose.bind(real);
  real.propose = async (records) => { await new Promise((r) => setTimeout(r, 5)); return propose(records); };
  const s = broker.services();
  const created = await Promise.allSettled(Array.from({ length: 8 }, () => s.autoCreateTopics(['once'], { principal: 'User:ANONYMOUS', clientId: 'auto', clientAddress: '127.0.0.1' })));
  assert.deepEqual(created.map((c) => c.status), created.map(() => 'fulfilled'), String(created.find((c) => c.status === 'rejected')?.status === 'rejected' ? (created.find((c) => c.status === 'rejected') as PromiseRejectedResult).reason : ''));
  const direct = await Promise.all(Array.from({ length: 4 }, () => broker.topicAdmin.createTopics({ topics: [{ name: 'direct', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false }, 7)));
  assert.deepEqual(direct.map((r) => r[0]!.errorCode).sort(), [0, ErrorCode.TOPIC_ALREADY_EXISTS, ErrorCode.TOPIC_ALREADY_EXISTS, ErrorCode.TOPIC_ALREADY_EXISTS]);
  assert.deepEqual([...real.view().topics()].map((t) => `${t.name}/${t.partitions.length}`).sort(), ['direct/2', 'once/1']);
  // Config changes read the configs every earlier change left: concurrent APPENDs all land.
  const appends = await Promise.all(Array.from({ length: 6 }, (_, i) => broker.configAdmin.incrementalAlter(2, 'direct', [{ name: 'leader.replication.throttled.replicas', configOperation: 2, value: `${i}:1` }], false)));
  assert.deepEqual(appends.map((r) => r.errorCode), [0, 0, 0, 0, 0, 0]);
  const list = real.view().configs(2, 'direct').get('leader.replication.throttled.replicas')!.split(',').sort();
  assert.deepEqual(list, ['0:1', '1:1', '2:1', '3:1', '4:1', '5:1']);
  // A change racing the topic's deletion is answered, and never leaves a record the image refuses.
  const [deleted, altered] = await Promise.all([
    broker.topicAdmin.deleteTopics([{ name: 'direct', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }]),
    broker.configAdmin.incrementalAlter(2, 'direct', [{ name: 'retention.ms', configOperation: 0, value: '1000' }], false),
  ]);
  assert.equal(deleted[0]!.errorCode, 0);
  assert.equal(altered.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  await server.close();
});

// The single node's metadata on the Raft room: a data directory of the server before Raft opens
// with its topics, configs and producer ids; snapshots in Kafka's format move the log start and
// give the same image after a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { killProcess, startServerProcess, tempDataDir } from '../broker/process-helpers.js';
import { consumeAll } from '../broker/log-reader.js';
import { startServer } from '../../src/node/index.js';
import { LogMetadata } from '../../src/node/metadata-log.js';
import { describeQuorumAnswer } from '../../src/broker/handlers/55-describe-quorum.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, decodeFromBuffer } from '../../src/protocol/index.js';
import { buildRecordBatchSync, iterateBatches, iterateRecords, parseControlRecordType } from '../../src/records/index.js';
import { FileCache, MemoryFileSystem, NodeFileSystem, PartitionLog, logConfig } from '../../src/storage/index.js';
import { imageToRecords, metadataRecord, serializeMetadataRecord } from '../../src/metadata/index.js';
import { systemClock } from '../../src/util/index.js';
import { SINGLE_NODE_DEFAULTS, parseBrokerConfig } from '../../src/config/index.js';
import type { EmittedRecord } from '../../src/controller/index.js';

const FIXTURE = join(process.cwd(), 'test', 'fixtures', 'metadata', 'legacy-single-node');

async function describeTopicConfig(client: ClusterClient, topic: string, key: string): Promise<string | undefined> {
  const r = await client.admin(ApiKey.DescribeConfigs, { resources: [{ resourceType: 2, resourceName: topic, configurationKeys: [key] }], includeSynonyms: false, includeDocumentation: false }, 4);
  return r.results[0].configs.find((c: { name: string }) => c.name === key)?.value;
}

test('a data directory written by the single-node server before Raft opens with its topics, configs and producer ids, and again after a restart', async () => {
  const dataDir = tempDataDir();
  cpSync(FIXTURE, dataDir, { recursive: true });
  const topicId = /topic_id: (\S+)/.exec(readFileSync(join(dataDir, 'kept-0', 'partition.metadata'), 'utf8'))![1]!;
  assert.ok(!existsSync(join(dataDir, '__cluster_metadata-0', 'quorum-state')), 'the fixture predates the quorum-state file');
  const producerIds: bigint[] = [];
  for (const round of [1, 2]) {
    const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir });
    const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
    try {
      const all = await client.metadata(null);
      assert.deepEqual(all.map((t) => t.name).sort(), round === 1 ? ['kept'] : ['kept', 'new-1'], `round ${round}: the deleted topic stays deleted`);
      const kept = await client.topic('kept');
      assert.equal(kept.topicId, topicId, `round ${round}: the topic keeps its id`);
      assert.deepEqual(kept.partitions.map((p) => p.partition), [0, 1, 2]);
      assert.equal(await describeTopicConfig(client, 'kept', 'retention.ms'), '86400000');
      assert.deepEqual(await consumeAll(client, 'kept', 1), ['before the upgrade']);
      const conn = await client.leaderFor('kept', 0);
      const pid = await conn.send(ApiKey.InitProducerId, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
      assert.equal(pid.errorCode, 0);
      producerIds.push(pid.producerId);
      const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: `new-${round}`, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false }, 7);
      assert.equal(created.topics[0].errorCode, 0);
    } finally {
      client.close();
      await server.close();
    }
    assert.ok(existsSync(join(dataDir, '__cluster_metadata-0', 'quorum-state')), 'the log is a Raft log now');
  }
  // The fixture's node took the block [0, 1000); every start takes a new block after the last one.
  assert.ok(producerIds[0]! >= 1000n, `producer id ${producerIds[0]} comes after the block taken before the upgrade`);
  assert.ok(producerIds[1]! > producerIds[0]!, 'producer ids never repeat across restarts');
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir });
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
  try {
    assert.deepEqual((await client.metadata(null)).map((t) => t.name).sort(), ['kept', 'new-1', 'new-2']);
  } finally {
    client.close();
    await server.close();
  }
});

function topicRecords(i: number): EmittedRecord[] {
  const topicId = Buffer.alloc(16, 0);
  topicId.writeUInt32BE(i + 1, 12);
  const id = topicId.toString('base64url');
  return [
    metadataRecord('TopicRecord', { name: `t-${i}`, topicId: id }),
    metadataRecord('PartitionRecord', { partitionId: 0, topicId: id, replicas: [1], isr: [1], leader: 1, leaderEpoch: 0, partitionEpoch: 0 }),
    metadataRecord('ConfigRecord', { resourceType: 2, resourceName: `t-${i}`, name: 'retention.ms', value: String(1000 + i) }),
  ] as unknown as EmittedRecord[];
}

async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('after metadata.log.max.record.bytes.between.snapshots the node writes a Kafka snapshot, deletes the log below it, and restarts to the same image', async () => {
  const logDir = tempDataDir();
  const dir = join(logDir, '__cluster_metadata-0');
  const open = () => LogMetadata.open({ logDir, fs: new NodeFileSystem(), clock: systemClock, clusterId: 'c', nodeId: 1, snapshotRecordBytes: 4000, segmentBytes: 1024 });
  const md = await open();
  let recordBytes = 0;
  let i = 0;
  for (; recordBytes < 4000; i++) {
    const records = topicRecords(i);
    recordBytes += records.reduce((n, r) => n + serializeMetadataRecord(r as never).length, 0);
    await md.commit(records);
  }
  const snapshotName = () => readdirSync(dir).find((n) => n.endsWith('.checkpoint'));
  await until('a snapshot file', () => snapshotName() !== undefined);
  // Written after the snapshot: replayed from the log on the next start.
  for (let j = 0; j < 3; j++, i++) await md.commit(topicRecords(i));
  const name = snapshotName()!;
  const m = /^(\d{20})-(\d{10})\.checkpoint$/.exec(name);
  assert.ok(m, `snapshot file name ${name} is <endOffset>-<epoch>.checkpoint`);
  const endOffset = Number(m[1]);
  assert.equal(md.raft.core.log.startOffset, endOffset, 'the log starts at the snapshot');
  const segments = readdirSync(dir).filter((n) => n.endsWith('.log')).map((n) => Number(n.slice(0, 20)));
  assert.ok(segments.every((base) => base >= endOffset - 1000), 'no segment older than the one holding the snapshot end');
  assert.ok(Math.min(...segments) > 0, `segments below the snapshot are deleted (left: ${segments.join(',')})`);

  // Kafka's layout: a control batch with the SnapshotHeader first, the records, the SnapshotFooter last.
  const batches = [...iterateBatches(readFileSync(join(dir, name)))];
  const controlTypes = (k: number) => [...iterateRecords(batches[k]!, batches[k]!.bytes().subarray(61))].map((r) => parseControlRecordType(r.key));
  assert.ok(batches[0]!.isControl && batches.at(-1)!.isControl);
  assert.equal(controlTypes(0)[0], 'SNAPSHOT_HEADER');
  assert.deepEqual(controlTypes(batches.length - 1), ['SNAPSHOT_FOOTER']);
  assert.equal(batches[0]!.partitionLeaderEpoch, Number(m[2]));
  let offset = 0;
  for (const b of batches) { assert.equal(b.baseOffset, offset, 'snapshot offsets count from 0'); offset = b.lastOffset + 1; }
  const header = [...iterateRecords(batches[0]!, batches[0]!.bytes().subarray(61))][0]!;
  assert.equal((decodeFromBuffer<{ version: number }>('SnapshotHeaderRecord', 0, header.value!)).version, 0);

  const before = imageToRecords(md.image);
  await md.close();
  const again = await open();
  try {
    assert.deepEqual(imageToRecords(again.image), before, 'the same image after the restart');
    assert.equal([...again.view().topics()].length, i);
    assert.equal(again.view().configs(2, `t-${i - 1}`).get('retention.ms'), String(1000 + i - 1));
    assert.ok(again.raft.core.log.startOffset >= endOffset, 'the log start stays past the snapshot');
    // Still writable after the restart.
    await again.commit(topicRecords(i));
    assert.equal([...again.view().topics()].length, i + 1);
  } finally {
    await again.close();
  }
});

test('a record the image refuses never reaches the log: the commit fails and later commits go on', async () => {
  const logDir = tempDataDir();
  const md = await LogMetadata.open({ logDir, fs: new NodeFileSystem(), clock: systemClock, clusterId: 'c', nodeId: 1 });
  try {
    const orphan = [metadataRecord('PartitionRecord', { partitionId: 0, topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', replicas: [1], isr: [1], leader: 1 })] as unknown as EmittedRecord[];
    await assert.rejects(md.commit(orphan));
    await md.commit(topicRecords(0));
    assert.deepEqual([...md.view().topics()].map((t) => t.name), ['t-0']);
  } finally {
    await md.close();
  }
  const again = await LogMetadata.open({ logDir, fs: new NodeFileSystem(), clock: systemClock, clusterId: 'c', nodeId: 1 });
  assert.deepEqual([...again.view().topics()].map((t) => t.name), ['t-0']);
  await again.close();
});

test('DescribeQuorum (55) answers from the node\'s Raft state: this node leads a quorum of itself', async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
  try {
    const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: 'q', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, 0);
    const conn = await client.leaderFor('q', 0);
    const versions = await conn.send(ApiKey.ApiVersions, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
    assert.deepEqual(versions.apiKeys.filter((k: { apiKey: number }) => k.apiKey === 55).map((k: { minVersion: number; maxVersion: number }) => [k.minVersion, k.maxVersion]), [[0, 2]]);
    for (const v of [0, 1, 2]) {
      const r = await conn.send(ApiKey.DescribeQuorum, v, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] });
      assert.equal(r.errorCode, 0);
      const p = r.topics[0].partitions[0];
      assert.equal(p.errorCode, 0);
      assert.equal(p.leaderId, 1);
      assert.ok(p.leaderEpoch >= 1, `leader epoch ${p.leaderEpoch}`);
      assert.ok(p.highWatermark > 0n, 'the bootstrap records and the topic are committed');
      assert.deepEqual(p.currentVoters.map((r: { replicaId: number; logEndOffset: bigint }) => [r.replicaId, r.logEndOffset]), [[1, p.highWatermark]]);
      assert.deepEqual(p.observers, []);
    }
    const other = await conn.send(ApiKey.DescribeQuorum, 2, { topics: [{ topicName: 'q', partitions: [{ partitionIndex: 0 }] }] });
    assert.equal(other.topics[0].partitions[0].errorCode, 3, 'UNKNOWN_TOPIC_OR_PARTITION');
  } finally {
    client.close();
    await server.close();
  }
});

test('DescribeQuorum on a node that does not lead answers NOT_LEADER_OR_FOLLOWER with the leader it knows', () => {
  const r = describeQuorumAnswer({ topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] },
    { isLeader: false, description: { leaderId: 2, leaderEpoch: 7, highWatermark: 10, voters: [], observers: [] } });
  const p = r.topics[0]!.partitions[0]!;
  assert.deepEqual([p.errorCode, p.leaderId, p.leaderEpoch], [6, 2, 7]);
});

test('logline server\'s defaults (process.roles=broker,controller, controller.quorum.voters=1@...) run a quorum of node 1; a voter set without this controller, or a broker named as a voter, is refused naming the key', async () => {
  const dataDir = tempDataDir();
  const config = parseBrokerConfig({ ...SINGLE_NODE_DEFAULTS, 'listeners': 'PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0', 'advertised.listeners': 'PLAINTEXT://127.0.0.1:0' });
  const server = await startServer({ config, dataDir });
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
  try {
    const r = await (await client.broker(1)).send(ApiKey.DescribeQuorum, 2, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] });
    assert.deepEqual(r.topics[0].partitions[0].currentVoters.map((v: { replicaId: number }) => v.replicaId), [1]);
  } finally {
    client.close();
    await server.close();
  }
  // (Quorums of several nodes are test/node/cluster.test.ts's.)
  assert.throws(() => parseBrokerConfig({ ...SINGLE_NODE_DEFAULTS, 'listeners': 'PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0', 'advertised.listeners': 'PLAINTEXT://127.0.0.1:0', 'controller.quorum.voters': '2@localhost:9094,3@localhost:9095,4@localhost:9096' }), /controller\.quorum\.voters/);
  const brokerOnly = parseBrokerConfig({ ...SINGLE_NODE_DEFAULTS, 'process.roles': 'broker', 'listeners': 'PLAINTEXT://127.0.0.1:0', 'advertised.listeners': 'PLAINTEXT://127.0.0.1:0' });
  await assert.rejects(startServer({ config: brokerOnly, dataDir: tempDataDir() }), /process\.roles/);
});

test('kill -9 of logline server while topics are being created: every acknowledged topic is there after each restart', async () => {
  const dataDir = tempDataDir();
  const acked = new Set<string>();
  let n = 0;
  for (let round = 0; round < 3; round++) {
    const { child, port } = await startServerProcess(dataDir);
    const client = new ClusterClient({ bootstrap: `127.0.0.1:${port}` });
    try {
      const names = new Set((await client.metadata(null)).map((t) => t.name));
      for (const name of acked) assert.ok(names.has(name), `round ${round}: acknowledged topic ${name} is there`);
      // Four creators at once; the kill lands while some of them wait for their commit.
      let stop = false;
      const creators = Array.from({ length: 4 }, async () => {
        while (!stop) {
          const name = `t-${n++}`;
          try {
            const r = await client.admin(ApiKey.CreateTopics, { topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false }, 7);
            if (r.topics[0].errorCode === 0) acked.add(name);
          } catch { return; }
        }
      });
      await until('some topics created', () => acked.size >= (round + 1) * 20);
      stop = true;
      await killProcess(child);
      await Promise.allSettled(creators);
    } finally {
      client.close();
      await killProcess(child);
    }
  }
  const { child, port } = await startServerProcess(dataDir);
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${port}` });
  try {
    const names = new Set((await client.metadata(null)).map((t) => t.name));
    assert.deepEqual([...acked].filter((a) => !names.has(a)), [], 'no acknowledged topic is lost');
  } finally {
    client.close();
    await killProcess(child);
  }
});

test('a metadata log holding a record the image refuses fails the start with the reason, instead of serving a partial image', async () => {
  const fs = new MemoryFileSystem();
  const log = PartitionLog.open({ dir: '/d/__cluster_metadata-0', files: new FileCache(fs, 8), config: logConfig({}), clock: systemClock, recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: false });
  const orphan = metadataRecord('PartitionRecord', { partitionId: 0, topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', replicas: [1], isr: [1], leader: 1 });
  await log.appendAsLeader(buildRecordBatchSync({ records: [{ key: null, value: serializeMetadataRecord(orphan) }] }), 0, 'coordinator');
  log.close();
  for (let attempt = 0; attempt < 2; attempt++) {
    await assert.rejects(LogMetadata.open({ logDir: '/d', fs, clock: systemClock, clusterId: 'c', nodeId: 1 }), /AAAAAAAAAAAAAAAAAAAAAQ|unknown|topic/i);
  }
});

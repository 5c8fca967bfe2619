// Tiering in a 3-broker cluster (one controller, three brokers, RF 3, the local directory backend
// shared by all brokers as their object store, `__remote_log_metadata` with two replicas so one
// broker reads each of its partitions over the network): the leader is killed while segments are still
// being copied; the new leader continues from what the old one copied (no offset missing, none
// copied twice as the copy served); every offset reads back from 0 exactly once; a follower whose
// disk is wiped restarts and copies only the local window, its epochs rebuilt from the tier.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { startCluster, type ClusterHandle, type ClusterNodeHandle } from '../../src/node/index.js';
import { RemoteLogSegmentState } from '../../src/tiered/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { until } from '../broker/process-helpers.js';

const TOPIC = 'tiered-c';
const VALUE_BYTES = 1000;
const value = (i: number) => `v${i}-`.padEnd(VALUE_BYTES, 'z');

describe('tiering in a 3-broker cluster', { timeout: 180_000 }, () => {
  let cluster: ClusterHandle;
  let remoteDir: string;
  let produced = 0;

  const node = (id: number): ClusterNodeHandle => cluster.nodes.find((n) => n.nodeId === id)!;
  const partitionOn = (id: number) => node(id).server?.broker?.replicaManager.partition(TOPIC, 0);
  const leaderId = (): number => {
    for (const n of cluster.nodes) {
      const p = n.server?.broker?.replicaManager.partition(TOPIC, 0);
      if (p?.isLeader === true) return n.nodeId;
    }
    return -1;
  };
  const produce = async (count: number) => {
    const kafka = new Kafka({ brokers: cluster.bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 100 } });
    // Not idempotent: kafkajs asks the controller for a producer id, and the controller here is not a broker.
    const producer = kafka.producer();
    await producer.connect();
    for (let sent = 0; sent < count; sent += 50) {
      const messages = Array.from({ length: 50 }, (_, j) => ({ key: `k${produced + j}`, value: value(produced + j) }));
      await producer.send({ topic: TOPIC, acks: -1, messages });
      produced += 50;
    }
    await producer.disconnect();
  };

  const setCopyDisable = async (disabled: boolean) => {
    const client = new ClusterClient({ bootstrap: cluster.bootstrap });
    try {
      const r = await client.retrying(() => client.admin(ApiKey.IncrementalAlterConfigs, {
        // Kafka refuses copy.disable unless local retention is the whole retention (-2) meanwhile.
        resources: [{ resourceType: 2, resourceName: TOPIC, configs: [
          { name: 'remote.log.copy.disable', configOperation: 0, value: String(disabled) },
          { name: 'local.retention.bytes', configOperation: 0, value: disabled ? '-2' : String(1024 * 1024) },
          { name: 'local.retention.ms', configOperation: 0, value: '-2' },
        ] }], validateOnly: false,
      }, 1));
      assert.equal(r.responses[0].errorCode, 0, r.responses[0].errorMessage);
    } finally {
      client.close();
    }
  };

  before(async () => {
    remoteDir = mkdtempSync(join(tmpdir(), 'logline-tier-cluster-'));
    cluster = await startCluster({
      controllers: 1, brokers: 3,
      config: {
        'remote.log.storage.system.enable': 'true', 'remote.log.storage.manager.class.name': 'org.apache.kafka.server.log.remote.storage.LocalTieredStorage',
        'rsm.config.dir': remoteDir, 'remote.log.manager.task.interval.ms': '200', 'log.retention.check.interval.ms': '200',
        'rlmm.config.remote.log.metadata.topic.num.partitions': '3', 'default.replication.factor': '3',
        // Two replicas of each metadata partition among three brokers: one broker reads it from the leader over the network.
        'rlmm.config.remote.log.metadata.topic.replication.factor': '2',
        // A killed leader is fenced, and its partitions move, within 3 s.
        'broker.session.timeout.ms': '3000',
      },
    });
    // Our client: kafkajs' admin asks the controller, and the controller here is not a broker.
    const client = new ClusterClient({ bootstrap: cluster.bootstrap });
    const configs = [['remote.storage.enable', 'true'], ['segment.bytes', String(1024 * 1024)], ['local.retention.bytes', String(1024 * 1024)], ['min.insync.replicas', '2']]
      .map(([name, v]) => ({ name, value: v }));
    const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: TOPIC, numPartitions: 1, replicationFactor: 3, assignments: [], configs }], timeoutMs: 10_000, validateOnly: false }, 7);
    client.close();
    assert.equal(created.topics[0].errorCode, 0, created.topics[0].errorMessage);
  });

  // Bounded: a shutdown that hangs fails here instead of holding the run.
  after(async () => {
    await cluster?.close();
    rmSync(remoteDir, { recursive: true, force: true });
  }, { timeout: 60_000 });

  it('the leader killed while segments remain to copy: the new leader continues, no offset missing or copied twice', async () => {
    await produce(3000);
    const first = leaderId();
    assert.ok(first > 0);
    const oldLog = partitionOn(first)!.log.tieredLog!;
    await until(30_000, 'a first segment copied', async () => (oldLog.highestOffsetInRemoteStorage >= 0 ? true : undefined), 10);
    // Copying can keep up with this producer: it is paused (KIP-950's remote.log.copy.disable)
    // while more segments roll, so the kill always leaves some to copy; the new leader resumes it.
    await setCopyDisable(true);
    await until(30_000, 'copying paused on the leader', async () => (oldLog.config.remoteLogCopyDisable ? true : undefined), 20);
    await produce(1500);
    const copiedBeforeKill = oldLog.highestOffsetInRemoteStorage;
    const rolledBeforeKill = oldLog.segments.at(-1)!.baseOffset - 1;
    await node(first).kill();
    await setCopyDisable(false);
    assert.ok(copiedBeforeKill < rolledBeforeKill, `killed with offsets ${copiedBeforeKill + 1}..${rolledBeforeKill} still to copy`);
    await until(30_000, 'a new leader', async () => { const id = leaderId(); return id > 0 && id !== first ? id : undefined; }, 50);
    await produce(3000);
    const leader = leaderId();
    const log = partitionOn(leader)!.log.tieredLog!;
    const rlm = node(leader).server!.broker!.replicaManager.remoteLog!;
    const tip = { topicId: partitionOn(leader)!.topicId, topic: TOPIC, partition: 0 };
    // Everything rolled gets copied; local retention keeps ~1 MiB.
    await until(60_000, 'the new leader copying the rest', async () => {
      const rolled = log.segments.at(-1)!.baseOffset - 1;
      const unfinished = rlm.metadata.store.listRemoteLogSegments(tip).filter((m) => m.state !== RemoteLogSegmentState.COPY_SEGMENT_FINISHED);
      return log.highestOffsetInRemoteStorage === rolled && unfinished.length === 0 && log.localLogStartOffset > copiedBeforeKill ? true : undefined;
    }, 100);
    const segments = rlm.metadata.store.listRemoteLogSegments(tip).sort((a, b) => a.startOffset - b.startOffset);
    assert.equal(segments[0]!.startOffset, 0);
    for (let i = 1; i < segments.length; i++) assert.equal(segments[i]!.startOffset, segments[i - 1]!.endOffset + 1, `segment ${i} continues the one before`);
    assert.ok(segments.some((m) => m.brokerId === first) && segments.some((m) => m.brokerId === leader), 'both leaders copied, the second from where the first stopped');
    assert.equal(log.logStartOffset, 0);
    // Every running broker knows the segments, also the one without a replica of their metadata partition.
    const metadataPartition = rlm.metadata.metadataPartition(tip);
    const withoutReplica = cluster.nodes.filter((n) => n.running && n.roles.includes('broker') && n.server!.broker!.replicaManager.partition('__remote_log_metadata', metadataPartition) === undefined);
    for (const n of cluster.nodes.filter((x) => x.running && x.roles.includes('broker'))) {
      await until(10_000, `broker ${n.nodeId} replaying the metadata`, async () => (n.server!.broker!.replicaManager.remoteLog!.metadata.store.listRemoteLogSegments(tip).length === segments.length ? true : undefined), 50);
    }
    assert.ok(withoutReplica.length <= 1);

    // Every offset from 0, exactly once, across the tier and both leaderships.
    const kafka = new Kafka({ brokers: cluster.bootstrap.split(',').filter((b) => !b.endsWith(`:${node(first).brokerPort}`)), logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: 'tiered-cluster-reader', maxBytesPerPartition: 512 * 1024 });
    await consumer.connect();
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    const seen: number[] = [];
    const values: string[] = [];
    const done = new Promise<void>((resolve) => {
      void consumer.run({ eachMessage: async ({ message }) => { seen.push(Number(message.offset)); values.push(message.value!.toString()); if (seen.length >= produced) resolve(); } });
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([done, new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`read ${seen.length} of ${produced}`)), 60_000); })]);
    } finally {
      clearTimeout(timer);
      await consumer.disconnect();
    }
    assert.deepEqual(seen, Array.from({ length: produced }, (_, i) => i), 'offsets 0.. in order, exactly once');
    assert.equal(new Set(values).size, produced, 'every record once');
    await node(first).restart();
  });

  it('a follower whose disk is wiped restarts at the leader\'s local log start and copies only the local window', async () => {
    const leader = leaderId();
    const follower = cluster.nodes.find((n) => n.roles.includes('broker') && n.nodeId !== leader && n.running)!;
    const leaderLog = partitionOn(leader)!.log.tieredLog!;
    await follower.kill();
    rmSync(follower.dataDir, { recursive: true, force: true });
    await follower.restart();
    await until(60_000, 'the wiped follower caught up', async () => {
      const p = partitionOn(follower.nodeId);
      return p !== undefined && p.log.logEndOffset === leaderLog.logEndOffset ? true : undefined;
    }, 100);
    const log = partitionOn(follower.nodeId)!.log.tieredLog!;
    assert.equal(log.logStartOffset, leaderLog.logStartOffset, 'the log start offset is the leader\'s (in the tier)');
    assert.ok(log.localLogStartOffset >= leaderLog.localLogStartOffset - 1 && log.localLogStartOffset > 0, `local start ${log.localLogStartOffset}, leader's ${leaderLog.localLogStartOffset}`);
    // Only the local window crossed the network: at most local.retention.bytes plus the segments around it.
    assert.ok(log.size <= 1024 * 1024 + 2 * 1024 * 1024, `${log.size} bytes on the wiped follower`);
    assert.ok(log.size < (produced * VALUE_BYTES) / 2);
    assert.deepEqual(log.epochCache.all.map((e) => e.epoch), leaderLog.epochCache.all.map((e) => e.epoch), 'its leader epochs rebuilt from the tier');
  });
});

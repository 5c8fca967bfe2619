// The free-space floor in one process, on the in-memory file system (its capacity is the volume),
// so it runs everywhere (test/broker/disk-full.test.ts does it for real, on a tmpfs, as root):
// produce answers NOT_ENOUGH_REPLICAS with the disk's reason below log.dir.min.free.bytes while a group
// commit goes through, and lowering the floor dynamically (the cluster default, through
// IncrementalAlterConfigs) lets writes through within a sample.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatchSync } from '../../src/records/index.js';
import { MemoryFileSystem } from '../../src/storage/index.js';
import { until, within } from './process-helpers.js';

const MiB = 1 << 20;

test('below log.dir.min.free.bytes produce answers NOT_ENOUGH_REPLICAS with the reason, a group commit does not; a lower floor set dynamically lets writes through', { timeout: 120_000 }, async () => {
  const fs = new MemoryFileSystem();
  fs.capacityBytes = 48 * MiB;
  const server = await startServer({
    fs, dataDir: '/logline', listeners: ['PLAINTEXT://127.0.0.1:0'],
    config: parseBrokerConfig({ 'node.id': '1', 'log.dir.min.free.bytes': String(16 * MiB), 'log.dir.free.bytes.alert.threshold': String(24 * MiB), 'log.segment.bytes': String(4 * MiB), 'log.index.size.max.bytes': String(64 * 1024), 'offsets.topic.num.partitions': '1' }),
  });
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
  try {
    const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: 't', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, 0);
    const produce = async () => {
      const conn = await client.leaderFor('t', 0);
      const records = buildRecordBatchSync({ records: Array.from({ length: 16 }, () => ({ key: null, value: Buffer.alloc(16 * 1024, 7), timestamp: Date.now() })) });
      const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 5_000, topicData: [{ name: 't', partitionData: [{ index: 0, records }] }] });
      return r.responses[0].partitionResponses[0] as { errorCode: number; errorMessage: string | null; baseOffset: bigint };
    };
    let accepted = 0;
    let refusal: { errorCode: number; errorMessage: string | null } | null = null;
    // 256 KiB per request into 48 MiB: the floor is met long before the disk is full.
    for (let i = 0; i < 200 && refusal === null; i++) {
      const r = await produce();
      if (r.errorCode === ErrorCode.NONE) accepted++;
      else refusal = r;
    }
    assert.ok(refusal !== null, `refused after ${accepted} requests`);
    assert.equal(refusal.errorCode, ErrorCode.NOT_ENOUGH_REPLICAS);
    assert.match(refusal.errorMessage ?? '', /^log directory \/logline has \d+ usable bytes, below log\.dir\.min\.free\.bytes 16777216: produce is refused until space is freed/);
    // (The in-memory disk counts preallocated index files whole: small ones keep them out of the figures.)
    assert.ok(accepted * 256 * 1024 >= 16 * MiB, `${accepted} requests accepted before the floor`);
    assert.ok(fs.capacityBytes - fs.usedBytes >= 15 * MiB, `${fs.capacityBytes - fs.usedBytes} bytes left: stopped at the floor (one request past it at most)`);
    assert.deepEqual(server.logDirs().map((d) => d.state), ['full']);

    // A group commit (written by the group coordinator to __consumer_offsets) is not refused.
    const coordinator = await client.admin(ApiKey.FindCoordinator, { key: 'g', keyType: 0, coordinatorKeys: ['g'] }, 4);
    assert.equal(coordinator.coordinators[0].errorCode, 0);
    const conn = await client.broker(coordinator.coordinators[0].nodeId);
    const commit = await within(30_000, 'OffsetCommit', conn.send(ApiKey.OffsetCommit, 8, {
      groupId: 'g', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1n,
      topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, committedMetadata: null }] }],
    }));
    assert.equal(commit.topics[0].partitions[0].errorCode, 0);

    // The cluster default lowered to 1 MiB: writes resume at the next sample.
    const altered = await client.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: 4, resourceName: '', configs: [{ name: 'log.dir.min.free.bytes', configOperation: 0, value: String(MiB) }] }], validateOnly: false }, 1);
    assert.equal(altered.responses[0].errorCode, 0, altered.responses[0].errorMessage);
    await until(30_000, 'a produce accepted under the lowered floor', async () => ((await produce()).errorCode === ErrorCode.NONE ? true : undefined), 200);
    assert.deepEqual(server.logDirs().map((d) => ({ state: d.state, minFreeBytes: d.minFreeBytes })), [{ state: 'low', minFreeBytes: MiB }]);
  } finally {
    client.close();
    await server.close();
  }
});

// Tiering's topic-config rules where clients meet them (CreateTopics, IncrementalAlterConfigs), with
// Kafka's messages, and KIP-950: remote.log.copy.disable stops copying; turning
// remote.storage.enable off needs remote.log.delete.on.disable=true, and then deletes the remote data.
import { describe, it, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildRecordBatchSync } from '../../src/records/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { tempDataDir, until } from '../broker/process-helpers.js';

async function create(client: ClusterClient, name: string, configs: Record<string, string>): Promise<{ errorCode: number; errorMessage: string | null }> {
  const r = await client.admin(ApiKey.CreateTopics, {
    topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: Object.entries(configs).map(([n, value]) => ({ name: n, value })) }], timeoutMs: 10_000, validateOnly: false,
  }, 7);
  return r.topics[0];
}

async function alter(client: ClusterClient, topic: string, configs: Record<string, string>): Promise<{ errorCode: number; errorMessage: string | null }> {
  const r = await client.admin(ApiKey.IncrementalAlterConfigs, {
    resources: [{ resourceType: 2, resourceName: topic, configs: Object.entries(configs).map(([name, value]) => ({ name, configOperation: 0, value })) }], validateOnly: false,
  }, 1);
  return r.responses[0];
}

describe('tiered topic configs on a broker without tiered storage', () => {
  it('remote.storage.enable=true is refused on create and on alter, with Kafka\'s message', async () => {
    const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
    const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
    try {
      const refused = await create(client, 't', { 'remote.storage.enable': 'true' });
      assert.equal(refused.errorCode, ErrorCode.INVALID_CONFIG);
      assert.match(refused.errorMessage ?? '', /Tiered Storage functionality is disabled in the broker/);
      assert.equal((await create(client, 't', {})).errorCode, 0);
      const altered = await alter(client, 't', { 'remote.storage.enable': 'true' });
      assert.equal(altered.errorCode, ErrorCode.INVALID_CONFIG);
      assert.match(altered.errorMessage ?? '', /Tiered Storage functionality is disabled in the broker/);
    } finally {
      client.close();
      await server.close();
    }
  });
});

describe('tiered topic configs on a broker with tiered storage', { timeout: 120_000 }, () => {
  let server: ServerHandle;
  let client: ClusterClient;
  let remoteDir: string;
  before(async () => {
    remoteDir = mkdtempSync(join(tmpdir(), 'logline-tier-cfg-'));
    server = await startServer({
      listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir(), config: parseBrokerConfig({
        'node.id': '1', 'remote.log.storage.system.enable': 'true', 'remote.log.storage.manager.class.name': 'org.apache.kafka.server.log.remote.storage.LocalTieredStorage',
        'rsm.config.dir': remoteDir, 'remote.log.manager.task.interval.ms': '100', 'log.retention.check.interval.ms': '100', 'rlmm.config.remote.log.metadata.topic.num.partitions': '1',
      }),
    });
    client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
  });
  after(async () => {
    client?.close();
    await server?.close();
    rmSync(remoteDir, { recursive: true, force: true });
  });

  const produce = async (topic: string, batches: number) => {
    for (let i = 0; i < batches; i++) {
      const records = buildRecordBatchSync({ records: Array.from({ length: 10 }, (_, j) => ({ key: null, value: Buffer.alloc(10_000, 97 + ((i + j) % 26)), timestamp: Date.now() })) });
      const conn = await client.leaderFor(topic, 0);
      const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
      assert.equal(r.responses[0].partitionResponses[0].errorCode, 0);
    }
  };
  const remoteObjects = (topic: string) => readdirSync(remoteDir).filter((f) => f.startsWith(`${topic}-0-`)).flatMap((f) => readdirSync(join(remoteDir, f)));
  const tieredLog = (topic: string) => server.broker!.replicaManager.partition(topic, 0)!.log.tieredLog!;

  it('a compacted topic cannot tier; local retention must lie within the total', async () => {
    const compacted = await create(client, 'c', { 'remote.storage.enable': 'true', 'cleanup.policy': 'compact' });
    assert.equal(compacted.errorCode, ErrorCode.INVALID_CONFIG);
    assert.equal(compacted.errorMessage, 'Remote log storage is unsupported for the compacted topics');
    const local = await create(client, 'l', { 'remote.storage.enable': 'true', 'retention.bytes': '1000000', 'local.retention.bytes': '2000000' });
    assert.equal(local.errorCode, ErrorCode.INVALID_CONFIG);
    assert.match(local.errorMessage ?? '', /local\.retention\.bytes: Value must not be more than retention\.bytes property value: 1000000/);
  });

  it('remote.log.copy.disable stops copying; turning tiering off needs remote.log.delete.on.disable, which deletes the remote data', async () => {
    assert.equal((await create(client, 'k', { 'remote.storage.enable': 'true', 'segment.bytes': '1048576', 'local.retention.bytes': '0' })).errorCode, 0);
    await produce('k', 25);
    const log = tieredLog('k');
    // Every rolled segment copied, so no copy is in flight when copying is turned off.
    const activeBase = () => log.segments[log.segments.length - 1]!.baseOffset;
    await until(30_000, 'the rolled segments copied', async () => (log.highestOffsetInRemoteStorage === activeBase() - 1 && log.localLogStartOffset > 0 ? true : undefined), 50);
    // Kafka's rule: with copying disabled, local retention is the total retention.
    assert.equal((await alter(client, 'k', { 'remote.log.copy.disable': 'true' })).errorCode, ErrorCode.INVALID_CONFIG);
    assert.equal((await alter(client, 'k', { 'remote.log.copy.disable': 'true', 'local.retention.bytes': '-2' })).errorCode, 0);
    // The answer comes once the controller commits the change; the broker applies it as it replays the metadata.
    await until(10_000, 'the change applied on the broker', async () => (log.config.remoteLogCopyDisable ? true : undefined), 20);
    const copied = log.highestOffsetInRemoteStorage;
    await produce('k', 25);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(log.highestOffsetInRemoteStorage, copied, 'nothing more is copied');
    assert.ok(log.segments.length > 1, 'and the new segments stay local');

    const off = await alter(client, 'k', { 'remote.storage.enable': 'false' });
    assert.equal(off.errorCode, ErrorCode.INVALID_CONFIG);
    assert.match(off.errorMessage ?? '', /^It is invalid to disable remote storage without deleting remote data/);
    assert.ok(remoteObjects('k').length > 0);
    const deleted = await alter(client, 'k', { 'remote.storage.enable': 'false', 'remote.log.delete.on.disable': 'true' });
    assert.equal(deleted.errorCode, 0, deleted.errorMessage ?? '');
    await until(30_000, 'the remote data deleted', async () => (remoteObjects('k').length === 0 ? true : undefined), 50);
    // The log start moves once the partition's deletion is finished in the metadata, just after its objects go.
    await until(30_000, 'the log starting where its local data does', async () => (log.logStartOffset === log.localLogStartOffset ? true : undefined), 50);
    assert.ok(log.logStartOffset > 0);
  });
});

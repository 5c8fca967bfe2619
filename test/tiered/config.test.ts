// server.properties written for Kafka's LocalTieredStorage or Aiven's S3 plugin turn into our
// backend; other managers and bad combinations are refused naming the key.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseBrokerConfig, resolveTopicConfig, validateTopicConfigs, BrokerConfigError, ConfigError } from '../../src/config/index.js';
import { remoteStorageSettings, openRemoteStorageManager, validateTieredTopicConfig, REMOTE_STORAGE_DEFAULTS } from '../../src/tiered/index.js';

const base = { 'log.dirs': '/data/kafka' };

describe('remote storage configuration', () => {
  it('tiering off: no backend, and Kafka\'s defaults', () => {
    const c = parseBrokerConfig(base);
    assert.equal(remoteStorageSettings(c), null);
    assert.equal(c.get('remote.log.storage.manager.impl.prefix'), 'rsm.config.');
    assert.equal(c.get('remote.log.metadata.manager.impl.prefix'), 'rlmm.config.');
    assert.equal(c.get('remote.log.manager.task.interval.ms'), 30_000);
    assert.equal(c.get('remote.fetch.max.wait.ms'), 500);
    assert.equal(c.get('remote.log.index.file.cache.total.size.bytes'), 1_073_741_824);
    assert.equal(c.get('remote.log.metadata.manager.class.name'), 'org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager');
  });

  it('Kafka\'s LocalTieredStorage is the local directory backend (rsm.config.dir, else under the log directory)', async () => {
    const on = { ...base, 'remote.log.storage.system.enable': 'true', 'remote.log.storage.manager.class.name': 'org.apache.kafka.server.log.remote.storage.LocalTieredStorage' };
    assert.deepEqual(remoteStorageSettings(parseBrokerConfig(on))?.backend, { kind: 'local', dir: join('/data/kafka', 'remote-storage'), linkSegments: true });
    assert.equal((remoteStorageSettings(parseBrokerConfig({ ...on, 'rsm.config.link.segments': 'false' }))?.backend as { linkSegments: boolean }).linkSegments, false);
    assert.throws(() => remoteStorageSettings(parseBrokerConfig({ ...on, 'rsm.config.link.segments': 'yes' })), (e: unknown) => e instanceof ConfigError && e.key === 'rsm.config.link.segments');
    const dir = mkdtempSync(join(tmpdir(), 'logline-rsm-'));
    try {
      const s = remoteStorageSettings(parseBrokerConfig({ ...on, 'rsm.config.dir': dir, 'rsm.config.chunk.size': '1048576' }))!;
      assert.deepEqual(s.backend, { kind: 'local', dir, linkSegments: true });
      assert.equal(s.chunkBytes, 1_048_576);
      const rsm = await openRemoteStorageManager(s);
      await rsm.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a server.properties written for Aiven\'s S3 plugin is accepted unchanged', () => {
    const c = parseBrokerConfig({
      ...base,
      'remote.log.storage.system.enable': 'true',
      'remote.log.storage.manager.class.name': 'io.aiven.kafka.tieredstorage.RemoteStorageManager',
      'remote.log.storage.manager.class.path': '/opt/tiered-storage/*',
      'remote.log.storage.manager.impl.prefix': 'rsm.config.',
      'remote.log.metadata.manager.class.name': 'org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager',
      'remote.log.metadata.manager.listener.name': 'PLAINTEXT',
      'rlmm.config.remote.log.metadata.topic.replication.factor': '1',
      'rsm.config.storage.backend.class': 'io.aiven.kafka.tieredstorage.storage.s3.S3Storage',
      'rsm.config.storage.s3.bucket.name': 'kafka-tiered',
      'rsm.config.storage.s3.region': 'eu-west-1',
      'rsm.config.storage.s3.endpoint.url': 'http://127.0.0.1:9000',
      'rsm.config.storage.s3.path.style.access.enabled': 'true',
      'rsm.config.storage.aws.access.key.id': 'AK',
      'rsm.config.storage.aws.secret.access.key': 'SK',
      'rsm.config.chunk.size': '4194304',
      'rsm.config.fetch.chunk.cache.size': '104857600',
      'rsm.config.storage.s3.api.call.timeout': '60000',
      'rsm.config.storage.s3.api.call.attempt.timeout': '20000',
    });
    const s = remoteStorageSettings(c)!;
    assert.deepEqual(s.backend, {
      kind: 's3', bucket: 'kafka-tiered', region: 'eu-west-1', endpoint: 'http://127.0.0.1:9000', pathStyle: true,
      credentials: { accessKeyId: 'AK', secretAccessKey: 'SK' }, partBytes: REMOTE_STORAGE_DEFAULTS.partBytes, multipartThresholdBytes: REMOTE_STORAGE_DEFAULTS.partBytes,
      apiCallTimeoutMs: 60_000, apiCallAttemptTimeoutMs: 20_000,
    });
    assert.equal(s.chunkCacheBytes, 104_857_600);
  });

  it('any other remote storage manager is refused, naming the key', () => {
    assert.throws(() => parseBrokerConfig({ ...base, 'remote.log.storage.manager.class.name': 'com.example.MyRsm' }),
      (e: unknown) => e instanceof BrokerConfigError && e.problems.some((p) => p.name === 'remote.log.storage.manager.class.name' && p.message.includes('remote.log.storage.manager.class.name')));
    assert.throws(() => parseBrokerConfig({ ...base, 'remote.log.metadata.manager.class.name': 'com.example.MyRlmm' }), BrokerConfigError);
    assert.throws(() => remoteStorageSettings(parseBrokerConfig({ ...base, 'remote.log.storage.system.enable': 'true' })),
      (e: unknown) => e instanceof ConfigError && e.key === 'remote.log.storage.manager.class.name');
  });

  it('bad backend settings are refused naming the key', () => {
    const aiven = { ...base, 'remote.log.storage.system.enable': 'true', 'remote.log.storage.manager.class.name': 'io.aiven.kafka.tieredstorage.RemoteStorageManager', 'rsm.config.storage.backend.class': 'io.aiven.kafka.tieredstorage.storage.s3.S3Storage' };
    const key = (props: Record<string, string>): string | undefined => { try { remoteStorageSettings(parseBrokerConfig(props)); return undefined; } catch (e) { return (e as ConfigError).key; } };
    assert.equal(key(aiven), 'rsm.config.storage.s3.bucket.name');
    assert.equal(key({ ...aiven, 'rsm.config.storage.s3.bucket.name': 'b', 'rsm.config.storage.aws.access.key.id': 'AK' }), 'rsm.config.storage.aws.access.key.id');
    assert.equal(key({ ...aiven, 'rsm.config.storage.s3.bucket.name': 'b', 'rsm.config.storage.s3.multipart.upload.part.size': '1024' }), 'rsm.config.storage.s3.multipart.upload.part.size');
    assert.equal(key({ ...aiven, 'rsm.config.storage.s3.bucket.name': 'b', 'rsm.config.chunk.size': '0' }), 'rsm.config.chunk.size');
    assert.equal(key({ ...aiven, 'rsm.config.storage.s3.bucket.name': 'b', 'rsm.config.storage.s3.api.call.attempt.timeout': '0' }), 'rsm.config.storage.s3.api.call.attempt.timeout');
    assert.equal(key({ ...aiven, 'rsm.config.storage.s3.bucket.name': 'b', 'rsm.config.storage.s3.api.call.timeout': '5s' }), 'rsm.config.storage.s3.api.call.timeout');
    assert.equal(key({ ...aiven, 'rsm.config.storage.backend.class': 'io.aiven.kafka.tieredstorage.storage.gcs.GcsStorage' }), 'rsm.config.storage.backend.class');
  });

  it('settings under a changed prefix are accepted; unknown keys elsewhere are still refused', () => {
    const c = parseBrokerConfig({ ...base, 'remote.log.storage.manager.impl.prefix': 'rsm.s3.', 'rsm.s3.storage.s3.bucket.name': 'b' });
    assert.equal(c.originals.get('rsm.s3.storage.s3.bucket.name'), 'b');
    assert.throws(() => parseBrokerConfig({ ...base, 'remote.log.storage.manager.impl.prefix': 'rsm.s3.', 'rsm.config.chunk.size': '1' }), BrokerConfigError);
  });

  it('local.retention.* default to -2 (the topic\'s retention)', () => {
    const t = resolveTopicConfig({}, parseBrokerConfig(base));
    assert.equal(t.localRetentionMs, -2);
    assert.equal(t.localRetentionBytes, -2);
    assert.deepEqual(validateTopicConfigs({ 'local.retention.ms': '-3' }).map((p) => p.name), ['local.retention.ms']);
  });

  it('tiering a compacted topic is refused with Kafka\'s message, as is tiering on a broker without it', () => {
    const broker = parseBrokerConfig(base);
    const topic = (o: Record<string, string>) => resolveTopicConfig({ 'remote.storage.enable': 'true', ...o }, broker);
    assert.deepEqual(validateTieredTopicConfig(topic({ 'cleanup.policy': 'compact,delete' }), true).map((p) => p.message), ['Remote log storage is unsupported for the compacted topics']);
    assert.deepEqual(validateTieredTopicConfig(topic({}), false).map((p) => p.message), ['Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.']);
    assert.deepEqual(validateTieredTopicConfig(topic({}), true), []);
    assert.deepEqual(validateTieredTopicConfig(resolveTopicConfig({ 'cleanup.policy': 'compact' }, broker), false), [], 'no rule for a topic that does not tier');
  });

  it('local retention must lie within the total, and equal it once copying is disabled (KIP-950)', () => {
    const broker = parseBrokerConfig(base);
    const check = (o: Record<string, string>) => validateTieredTopicConfig(resolveTopicConfig({ 'remote.storage.enable': 'true', ...o }, broker), true).map((p) => p.name);
    assert.deepEqual(check({ 'retention.bytes': '100', 'local.retention.bytes': '200' }), ['local.retention.bytes']);
    assert.deepEqual(check({ 'retention.bytes': '100', 'local.retention.bytes': '-1' }), ['local.retention.bytes']);
    assert.deepEqual(check({ 'retention.ms': '100', 'local.retention.ms': '200' }), ['local.retention.ms']);
    assert.deepEqual(check({ 'retention.ms': '-1', 'local.retention.ms': '200' }), [], 'unlimited total retention bounds nothing');
    assert.deepEqual(check({ 'retention.ms': '1000', 'local.retention.ms': '100', 'remote.log.copy.disable': 'true' }), ['local.retention.ms']);
    assert.deepEqual(check({ 'retention.ms': '1000', 'local.retention.ms': '1000', 'remote.log.copy.disable': 'true' }), []);
  });

  it('tiering is turned off only with remote.log.delete.on.disable (KIP-950)', () => {
    const broker = parseBrokerConfig(base);
    assert.match(validateTieredTopicConfig(resolveTopicConfig({ 'remote.storage.enable': 'false' }, broker), true, true)[0]!.message, /^It is invalid to disable remote storage without deleting remote data/);
    assert.deepEqual(validateTieredTopicConfig(resolveTopicConfig({ 'remote.storage.enable': 'false', 'remote.log.delete.on.disable': 'true' }, broker), true, true), []);
  });
});

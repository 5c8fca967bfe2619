// Topic configs: inheritance from broker defaults, validation for CreateTopics/AlterConfigs,
// DescribeConfigs sources and synonym order, and IncrementalAlterConfigs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  parseBrokerConfig, resolveTopicConfig, validateTopicConfigs, describeTopicConfigs, describeBrokerConfigs,
  applyIncrementalOps, AlterConfigOp, ConfigSource, ConfigTypeId, TopicConfigError, TOPIC_KEYS,
} from '../../src/config/index.js';

const byName = <T extends { name: string }>(xs: readonly T[], name: string): T => {
  const x = xs.find((e) => e.name === name);
  assert.ok(x, `no entry ${name}`);
  return x;
};

test('topic keys fall back to the broker defaults through their synonyms', () => {
  const broker = parseBrokerConfig({ 'log.retention.hours': '24', 'log.segment.bytes': '2097152', 'message.max.bytes': '5000', 'log.cleanup.policy': 'compact', 'min.insync.replicas': '2', 'log.roll.hours': '1' });
  const t = resolveTopicConfig({}, broker);
  assert.equal(t.retentionMs, 86_400_000);
  assert.equal(t.segmentBytes, 2097152);
  assert.equal(t.maxMessageBytes, 5000);
  assert.deepEqual(t.cleanupPolicy, ['compact']);
  assert.equal(t.minInsyncReplicas, 2);
  assert.equal(t.segmentMs, 3_600_000);
  assert.equal(t.compressionType, 'producer');
  assert.equal(t.messageTimestampType, 'CreateTime');
  assert.equal(t.remoteStorageEnable, false);
  assert.equal(t.flushMessages, 2 ** 63);
  const o = resolveTopicConfig({ 'retention.ms': '1000', 'cleanup.policy': 'compact,delete', 'compression.type': 'zstd' }, broker);
  assert.equal(o.retentionMs, 1000);
  assert.deepEqual(o.cleanupPolicy, ['compact', 'delete']);
  assert.equal(o.compressionType, 'zstd');
});

test('every topic key is a field of the resolved TopicConfig', () => {
  const t = resolveTopicConfig({}, parseBrokerConfig({})) as unknown as Record<string, unknown>;
  assert.equal(Object.keys(t).length, Object.keys(TOPIC_KEYS).length);
  for (const v of Object.values(t)) assert.notEqual(v, undefined);
});

test('validateTopicConfigs reports each bad key with a message handlers can return', () => {
  assert.deepEqual(validateTopicConfigs({ 'retention.ms': '10', 'compression.type': 'gzip' }), []);
  const problems = validateTopicConfigs(new Map<string, string | null>([
    ['retention.mss', '1'], ['segment.bytes', '1000'], ['cleanup.policy', 'compact,archive'], ['min.insync.replicas', null],
    ['message.timestamp.type', 'createtime'],
  ]));
  assert.deepEqual(problems.map((p) => [p.name, p.errorCode]), [
    ['retention.mss', 'INVALID_CONFIG'], ['segment.bytes', 'INVALID_CONFIG'], ['cleanup.policy', 'INVALID_CONFIG'],
    ['min.insync.replicas', 'INVALID_CONFIG'], ['message.timestamp.type', 'INVALID_CONFIG'],
  ]);
  assert.match(problems[0]!.message, /did you mean "retention.ms"/);
  assert.match(problems[1]!.message, /"1000" for configuration segment.bytes: Value must be at least 1048576/);
  assert.match(problems[2]!.message, /Each item must be one of: compact, delete/);
  assert.match(validateTopicConfigs({ 'min.compaction.lag.ms': '10', 'max.compaction.lag.ms': '5' })[0]!.message, /conflict/);
  assert.throws(() => resolveTopicConfig({ 'retention.ms': 'soon' }, parseBrokerConfig({})), TopicConfigError);
});

test('DescribeConfigs on a topic with nothing set reports defaults, dropping synonyms before the primary one', () => {
  const entries = describeTopicConfigs({}, parseBrokerConfig({}), { includeSynonyms: true });
  const retention = byName(entries, 'retention.ms');
  assert.equal(retention.value, '604800000');
  assert.equal(retention.source, ConfigSource.DEFAULT_CONFIG);
  // Only log.retention.hours has a default, and Kafka drops synonyms ahead of log.retention.ms.
  assert.deepEqual(retention.synonyms, []);
  assert.equal(retention.configType, ConfigTypeId.LONG);
  const segment = byName(entries, 'segment.bytes');
  assert.deepEqual(segment.synonyms, [{ name: 'log.segment.bytes', value: '1073741824', source: ConfigSource.DEFAULT_CONFIG }]);
  assert.equal(byName(entries, 'flush.messages').value, '9223372036854775807');
  assert.equal(byName(entries, 'min.cleanable.dirty.ratio').configType, ConfigTypeId.DOUBLE);
  assert.equal(byName(entries, 'cleanup.policy').configType, ConfigTypeId.LIST);
  const remote = byName(entries, 'remote.storage.enable');
  assert.equal(remote.source, ConfigSource.DEFAULT_CONFIG);
  assert.equal(remote.readOnly, false);
});

test('DescribeConfigs synonym order: topic, dynamic broker, dynamic default, static, default', () => {
  const broker = parseBrokerConfig({ 'log.retention.hours': '24', 'min.insync.replicas': '2' });
  const dynamic = { clusterDefault: new Map([['log.retention.ms', '5000']]), perBroker: new Map([['min.insync.replicas', '3']]) };
  const withTopic = describeTopicConfigs({ 'retention.ms': '1000' }, broker, { includeSynonyms: true }, dynamic);
  const r = byName(withTopic, 'retention.ms');
  assert.equal(r.value, '1000');
  assert.equal(r.source, ConfigSource.DYNAMIC_TOPIC_CONFIG);
  assert.deepEqual(r.synonyms.map((s) => [s.name, s.value, s.source]), [
    ['retention.ms', '1000', 1], ['log.retention.ms', '5000', 3], ['log.retention.hours', '24', 4], ['log.retention.hours', '168', 5],
  ]);
  const inherited = byName(describeTopicConfigs({}, broker, { includeSynonyms: true }, dynamic), 'retention.ms');
  assert.equal(inherited.value, '5000');
  assert.equal(inherited.source, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
  const isr = byName(describeTopicConfigs({}, broker, { includeSynonyms: true }, dynamic), 'min.insync.replicas');
  assert.equal(isr.value, '3');
  assert.deepEqual(isr.synonyms.map((s) => [s.value, s.source]), [['3', 2], ['2', 4], ['1', 5]]);
  const noSyn = byName(describeTopicConfigs({}, broker, {}, dynamic), 'min.insync.replicas');
  assert.deepEqual(noSyn.synonyms, []);
  assert.equal(noSyn.source, ConfigSource.DYNAMIC_BROKER_CONFIG);
});

test('DescribeConfigs on a broker: read-only flags, sensitive values hidden, key filter and docs', () => {
  const broker = parseBrokerConfig({ 'log.retention.hours': '24', 'ssl.keystore.password': 'secret' });
  const entries = describeBrokerConfigs(broker, { clusterDefault: new Map([['log.retention.ms', '5000']]) }, {
    includeSynonyms: true, includeDocumentation: true, keys: ['log.retention.hours', 'log.retention.ms', 'ssl.keystore.password', 'no.such.key'],
  });
  assert.deepEqual(entries.map((e) => e.name), ['log.retention.ms', 'log.retention.hours', 'ssl.keystore.password']);
  const hours = byName(entries, 'log.retention.hours');
  assert.equal(hours.readOnly, true);
  assert.equal(hours.source, ConfigSource.STATIC_BROKER_CONFIG);
  assert.deepEqual(hours.synonyms.map((s) => [s.name, s.source]), [['log.retention.hours', 4], ['log.retention.hours', 5]]);
  assert.ok(hours.documentation !== null && hours.documentation.length > 0);
  const ms = byName(entries, 'log.retention.ms');
  assert.equal(ms.readOnly, false);
  assert.equal(ms.value, '5000');
  assert.equal(ms.source, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
  const pw = byName(entries, 'ssl.keystore.password');
  assert.equal(pw.value, null);
  assert.equal(pw.isSensitive, true);
  assert.equal(pw.configType, ConfigTypeId.PASSWORD);
  assert.deepEqual(pw.synonyms, [{ name: 'ssl.keystore.password', value: null, source: ConfigSource.STATIC_BROKER_CONFIG }]);
  const clusterDefault = describeBrokerConfigs(broker, { clusterDefault: new Map([['log.retention.ms', '5000']]) }, { includeSynonyms: true }, 'cluster-default');
  assert.deepEqual(clusterDefault.map((e) => [e.name, e.value, e.source, e.synonyms.length]), [['log.retention.ms', '5000', 3, 1]]);
});

test('incremental ops: SET, DELETE, APPEND and SUBTRACT on a topic', () => {
  const current = new Map([['retention.ms', '1000'], ['segment.bytes', '2097152']]);
  const r = applyIncrementalOps(current, [
    { name: 'retention.ms', op: AlterConfigOp.SET, value: '2000' },
    { name: 'segment.bytes', op: AlterConfigOp.DELETE, value: null },
    { name: 'cleanup.policy', op: AlterConfigOp.APPEND, value: 'compact' },
  ], 'topic');
  assert.ok(r.ok);
  assert.deepEqual([...r.configs], [['retention.ms', '2000'], ['cleanup.policy', 'delete,compact']]);
  assert.equal(current.get('segment.bytes'), '2097152', 'the input map is not changed');
  const s = applyIncrementalOps(r.configs, [{ name: 'cleanup.policy', op: AlterConfigOp.SUBTRACT, value: 'delete' }], 'topic');
  assert.ok(s.ok);
  assert.equal(s.configs.get('cleanup.policy'), 'compact');
});

test('incremental ops reject bad keys, values, list ops on scalars, duplicates and read-only broker keys', () => {
  const check = (ops: Parameters<typeof applyIncrementalOps>[1], kind: 'topic' | 'broker', code: string, pattern: RegExp): void => {
    const r = applyIncrementalOps(new Map(), ops, kind);
    assert.ok(!r.ok);
    assert.equal(r.errors[0]!.errorCode, code);
    assert.match(r.errors[0]!.message, pattern);
  };
  check([{ name: 'retention.msx', op: 0, value: '1' }], 'topic', 'INVALID_CONFIG', /did you mean "retention.ms"/);
  check([{ name: 'retention.ms', op: 0, value: 'x' }], 'topic', 'INVALID_CONFIG', /retention.ms/);
  check([{ name: 'retention.ms', op: AlterConfigOp.APPEND, value: '1' }], 'topic', 'INVALID_CONFIG', /append is not allowed for config key: retention.ms/);
  check([{ name: 'cleanup.policy', op: AlterConfigOp.APPEND, value: 'archive' }], 'topic', 'INVALID_CONFIG', /Each item must be one of/);
  check([{ name: 'retention.ms', op: 0, value: '1' }, { name: 'retention.ms', op: 1, value: null }], 'topic', 'INVALID_REQUEST', /duplicate/);
  check([{ name: 'retention.ms', op: 7, value: '1' }], 'topic', 'INVALID_REQUEST', /Unknown config operation/);
  check([{ name: 'node.id', op: 0, value: '2' }], 'broker', 'INVALID_CONFIG', /Cannot update these configs dynamically: node.id/);
  const ok = applyIncrementalOps(new Map(), [{ name: 'log.retention.ms', op: 0, value: '5000' }, { name: 'sasl.enabled.mechanisms', op: AlterConfigOp.APPEND, value: 'PLAIN' }], 'broker');
  assert.ok(ok.ok);
  assert.deepEqual([...ok.configs], [['log.retention.ms', '5000'], ['sasl.enabled.mechanisms', 'GSSAPI,PLAIN']]);
});

test('per-broker keys cannot be set as a cluster-wide default', () => {
  const ops = [{ name: 'listeners', op: AlterConfigOp.SET, value: 'PLAINTEXT://:9094' }];
  const r = applyIncrementalOps(new Map(), ops, 'broker', { brokerScope: 'cluster-default' });
  assert.ok(!r.ok);
  assert.match(r.errors[0]!.message, /broker id must be specified: listeners/);
  assert.ok(applyIncrementalOps(new Map(), ops, 'broker', { brokerScope: 'broker' }).ok);
});

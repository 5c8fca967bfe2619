// Kafka 4.x's whole key list (test/fixtures/kafka-config-keys.json, read from Kafka 4.2.0's config
// definitions, with the 4.0 keys removed since) through the parser, IncrementalAlterConfigs and DescribeConfigs: every key is used,
// accepted and marked unused, or refused with a reason; nothing throws.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { KAFKA_KEYS, TIERED, sampleValue } from './kafka-keys.js';
import {
  applyIncrementalOps, AlterConfigOp, documentation, BrokerConfigError, ConfigSource, describeBrokerConfigs, describeResourceConfigs,
  keyOf, parseBrokerConfig, parseProperties, refusedReason, renderConfigReference, resolveTopicConfig, TopicConfigError,
  BROKER_KEY_LIST, TOPIC_KEY_LIST, GROUP_KEY_LIST, CLIENT_METRICS_KEY_LIST, REFUSED_BROKER_KEYS,
  type ConfigKeyDef, type ConfigKind,
} from '../../src/config/index.js';

const root = new URL('../../../', import.meta.url);

const KINDS: [ConfigKind, string[]][] = [['broker', KAFKA_KEYS.broker], ['topic', KAFKA_KEYS.topic], ['group', KAFKA_KEYS.group], ['client-metrics', KAFKA_KEYS.clientMetrics]];

test('every Kafka 4.x key is known to Logline or refused with a reason', () => {
  for (const [kind, names] of KINDS) {
    assert.ok(names.length > 0, kind);
    const missing = names.filter((n) => !TIERED.test(n) && keyOf(kind, n) === undefined && refusedReason(kind, n) === undefined);
    assert.deepEqual(missing, [], `${kind} keys Kafka knows and Logline neither accepts nor refuses`);
  }
  const count = (defs: readonly ConfigKeyDef[]) => ({ used: defs.filter((d) => d.unused !== true).length, unused: defs.filter((d) => d.unused === true).length });
  for (const [kind, defs] of [['broker', BROKER_KEY_LIST], ['topic', TOPIC_KEY_LIST], ['group', GROUP_KEY_LIST], ['client-metrics', CLIENT_METRICS_KEY_LIST]] as const) {
    const c = count(defs);
    console.log(`${kind}: ${c.used} used, ${c.unused} accepted and unused`);
  }
});

test('server.properties with every accepted Kafka broker key parses; each refused one is named with its reason', () => {
  const accepted = KAFKA_KEYS.broker.map((n) => keyOf('broker', n)).filter((d): d is ConfigKeyDef => d !== undefined);
  const text = accepted.filter((d) => !['listeners', 'advertised.listeners', 'process.roles', 'security.inter.broker.protocol'].includes(d.name))
    .map((d) => `${d.name}=${sampleValue(d).replace(/\\/g, '\\\\')}`).join('\n');
  const c = parseBrokerConfig(parseProperties(text));
  assert.equal(c.get('sasl.kerberos.min.time.before.relogin'), 60000);
  for (const name of KAFKA_KEYS.broker.filter((n) => refusedReason('broker', n) !== undefined)) {
    assert.throws(() => parseBrokerConfig({ [name]: '1' }), (e: unknown) => {
      assert.ok(e instanceof BrokerConfigError);
      assert.equal(e.problems.length, 1);
      assert.match(e.problems[0]!.message, new RegExp(`"${name.replace(/\./g, '\\.')}" is not accepted: .+`));
      return true;
    });
  }
  try { parseBrokerConfig({ 'zookeeper.connect': 'zk:2181' }); } catch (e) { assert.match((e as Error).message, /ZooKeeper mode is gone in Kafka 4\.0; Logline runs KRaft only/); }
  try { parseBrokerConfig({ 'no.kafka.key.ever': '1' }); assert.fail('accepted an unknown key'); } catch (e) { assert.match((e as Error).message, /Unknown broker configuration "no\.kafka\.key\.ever"/); }
});

test('topic configs refuse the keys Kafka 4.0 removed, with the reason', () => {
  assert.throws(() => resolveTopicConfig({ 'message.format.version': '2.8' }, parseBrokerConfig({})), (e: unknown) =>
    e instanceof TopicConfigError && /message\.format\.version" is not accepted: removed in Kafka 4\.0/.test(e.message));
});

test('IncrementalAlterConfigs over every Kafka key of every kind: accepted where Kafka updates it, refused with a reason otherwise', () => {
  for (const [kind, names] of KINDS) {
    for (const name of names) {
      const def = keyOf(kind, name);
      const op = { name, op: AlterConfigOp.SET, value: def === undefined ? '1' : sampleValue(def) };
      const r = applyIncrementalOps(new Map(), [op], kind, { brokerScope: 'broker' });
      if (def === undefined) {
        if (TIERED.test(name)) continue;
        assert.equal(r.ok, false, name);
        if (!r.ok) assert.match(r.errors[0]!.message, /is not accepted: /, name);
      } else if (kind === 'broker' && def.dynamic === 'read-only') {
        assert.equal(r.ok, false, name);
        if (!r.ok) assert.match(r.errors[0]!.message, /Cannot update these configs dynamically/);
      } else if (kind !== 'topic') {
        assert.equal(r.ok, true, `${kind} ${name}: ${r.ok ? '' : r.errors[0]!.message}`);
      }
    }
  }
});

test('an unused key says so in its documentation; Java plugin classes are accepted only at the default', () => {
  const described = describeBrokerConfigs(parseBrokerConfig({}), {}, { includeDocumentation: true, keys: ['sasl.kerberos.min.time.before.relogin'] });
  assert.match(described[0]!.documentation!, /^Accepted, not used: Logline has no Kerberos/);
  for (const defs of [BROKER_KEY_LIST, TOPIC_KEY_LIST, GROUP_KEY_LIST, CLIENT_METRICS_KEY_LIST]) {
    for (const d of defs.filter((x) => x.unused === true)) assert.match(documentation(d), /^Accepted/, d.name);
  }
  const r = applyIncrementalOps(new Map(), [{ name: 'create.topic.policy.class.name', op: AlterConfigOp.SET, value: 'com.acme.Policy' }], 'broker');
  assert.equal(r.ok, false);
  assert.equal(parseBrokerConfig({ 'principal.builder.class': 'org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder' }).get('principal.builder.class'),
    'org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder');
  assert.throws(() => parseBrokerConfig({ 'metric.reporters': 'io.confluent.metrics.reporter.ConfluentMetricsReporter' }), /cannot load Java classes/);
});

test('Kafka 4.1 and 4.2 keys take Kafka\'s validators: share and streams group keys, OAUTHBEARER, config.providers', () => {
  const set = (kind: ConfigKind, name: string, value: string) => applyIncrementalOps(new Map(), [{ name, op: AlterConfigOp.SET, value }], kind, { brokerScope: 'broker' }).ok;
  for (const v of ['earliest', 'latest', 'by_duration:PT1H', 'by_duration:P1DT2H30M', 'by_duration:PT0.5S']) assert.equal(set('group', 'share.auto.offset.reset', v), true, v);
  for (const v of ['none', 'LATEST', 'by_duration:', 'by_duration:-PT1H', 'by_duration:PT', 'by_duration:1h']) assert.equal(set('group', 'share.auto.offset.reset', v), false, v);
  assert.equal(set('group', 'share.isolation.level', 'read_committed'), true);
  assert.equal(set('group', 'share.isolation.level', 'committed'), false);
  assert.equal(set('group', 'share.delivery.count.limit', '2'), true);
  assert.equal(set('group', 'share.delivery.count.limit', '1'), false);
  assert.equal(set('group', 'share.partition.max.record.locks', '99'), false);
  assert.equal(set('group', 'share.record.lock.duration.ms', '999'), false);
  assert.equal(set('group', 'streams.num.standby.replicas', '-1'), false);
  assert.equal(set('group', 'share.renew.acknowledge.enable', 'false'), true);
  assert.equal(set('broker', 'config.providers', ''), true);
  assert.equal(set('broker', 'config.providers', 'file'), false);
  assert.equal(set('broker', 'sasl.oauthbearer.assertion.claim.exp.seconds', '86401'), false);
  assert.throws(() => parseBrokerConfig({ 'sasl.oauthbearer.jwt.validator.class': 'com.acme.Validator' }), /cannot load Java classes/);
  assert.throws(() => parseBrokerConfig({ 'group.share.assignors': '' }), /non-empty list/);
  assert.equal(parseBrokerConfig({ 'sasl.oauthbearer.assertion.algorithm': 'es256' }).get('sasl.oauthbearer.assertion.algorithm'), 'es256');
  const group = describeResourceConfigs('group', new Map(), parseBrokerConfig({ 'group.streams.session.timeout.ms': '50000' }), { includeDocumentation: true });
  const streams = group.find((e) => e.name === 'streams.session.timeout.ms')!;
  assert.equal(streams.value, '50000');
  assert.equal(streams.source, ConfigSource.STATIC_BROKER_CONFIG);
  assert.match(streams.documentation!, /^Accepted, not used: Logline has no streams groups/);
});

test('listener overrides: per broker as Kafka has them, connection limits also as cluster defaults, described with the base key as synonym', () => {
  const perBroker = applyIncrementalOps(new Map(), [{ name: 'listener.name.sasl_ssl.sasl.kerberos.min.time.before.relogin', op: AlterConfigOp.SET, value: '1000' }], 'broker', { brokerScope: 'broker' });
  assert.equal(perBroker.ok, true);
  const atDefault = applyIncrementalOps(new Map(), [{ name: 'listener.name.sasl_ssl.ssl.cipher.suites', op: AlterConfigOp.SET, value: '' }], 'broker', { brokerScope: 'cluster-default' });
  assert.equal(atDefault.ok, false);
  if (!atDefault.ok) assert.match(atDefault.errors[0]!.message, /broker id must be specified/);
  assert.equal(applyIncrementalOps(new Map(), [{ name: 'listener.name.plaintext.max.connections', op: AlterConfigOp.SET, value: '10' }], 'broker', { brokerScope: 'cluster-default' }).ok, true);
  assert.equal(applyIncrementalOps(new Map(), [{ name: 'listener.name.sasl_plaintext.plain.sasl.server.callback.handler.class', op: AlterConfigOp.SET, value: '' }], 'broker').ok, true);
  assert.equal(applyIncrementalOps(new Map(), [{ name: 'listener.name.plaintext.zookeeper.connect', op: AlterConfigOp.SET, value: 'zk' }], 'broker').ok, false);

  const broker = parseBrokerConfig({ 'listener.name.plaintext.ssl.cipher.suites': 'TLS_AES_128_GCM_SHA256' });
  const dynamic = { perBroker: new Map([['listener.name.plaintext.max.connections', '5']]), clusterDefault: new Map([['max.connections', '100']]) };
  const entries = describeBrokerConfigs(broker, dynamic, { includeSynonyms: true, keys: ['listener.name.plaintext.ssl.cipher.suites', 'listener.name.plaintext.max.connections'] });
  const cipher = entries.find((e) => e.name === 'listener.name.plaintext.ssl.cipher.suites')!;
  assert.equal(cipher.source, ConfigSource.STATIC_BROKER_CONFIG);
  assert.deepEqual(cipher.synonyms.map((s) => [s.name, s.source]), [
    ['listener.name.plaintext.ssl.cipher.suites', ConfigSource.STATIC_BROKER_CONFIG], ['ssl.cipher.suites', ConfigSource.DEFAULT_CONFIG]]);
  const limit = entries.find((e) => e.name === 'listener.name.plaintext.max.connections')!;
  assert.equal(limit.value, '5');
  assert.deepEqual(limit.synonyms.map((s) => [s.name, s.source]), [
    ['listener.name.plaintext.max.connections', ConfigSource.DYNAMIC_BROKER_CONFIG],
    ['max.connections', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG], ['max.connections', ConfigSource.DEFAULT_CONFIG]]);
});

test('group and client-metrics configs: the override with its source, else the broker synonym', () => {
  const broker = parseBrokerConfig({ 'group.consumer.session.timeout.ms': '50000' });
  const entries = describeResourceConfigs('group', new Map([['consumer.heartbeat.interval.ms', '3000']]), broker, { includeSynonyms: true, includeDocumentation: true });
  const hb = entries.find((e) => e.name === 'consumer.heartbeat.interval.ms')!;
  assert.equal(hb.value, '3000');
  assert.equal(hb.source, ConfigSource.GROUP_CONFIG);
  const session = entries.find((e) => e.name === 'consumer.session.timeout.ms')!;
  assert.equal(session.value, '50000');
  assert.equal(session.source, ConfigSource.STATIC_BROKER_CONFIG);
  assert.match(session.documentation!, /^Accepted, not used/);
  const cm = describeResourceConfigs('client-metrics', new Map([['interval.ms', '1000']]), broker, {});
  assert.deepEqual(cm.map((e) => [e.name, e.value, e.source]), [
    ['metrics', '', ConfigSource.DEFAULT_CONFIG], ['interval.ms', '1000', ConfigSource.CLIENT_METRICS_CONFIG], ['match', '', ConfigSource.DEFAULT_CONFIG]]);
  assert.equal(applyIncrementalOps(new Map(), [{ name: 'retention.ms', op: AlterConfigOp.SET, value: '1' }], 'group').ok, false);
});

test('the refused broker keys are all Kafka keys, and docs/config-reference.md is current', () => {
  for (const name of REFUSED_BROKER_KEYS.keys()) assert.equal(keyOf('broker', name), undefined, name);
  const committed = readFileSync(new URL('docs/config-reference.md', root), 'utf8');
  assert.equal(committed, renderConfigReference(), 'run: npx tsc -p tsconfig.json && node scripts/config-reference.mjs');
});

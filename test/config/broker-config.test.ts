// Broker configuration: Kafka's defaults, derived settings, and rejected keys and values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  parseBrokerConfig, parseProperties, BrokerConfigError, ConfigError, SINGLE_NODE_DEFAULTS, BROKER_KEY_LIST, TOPIC_KEY_LIST, parseValue,
} from '../../src/config/index.js';

test('an empty file resolves every key to Kafka 4.0 defaults', () => {
  const c = parseBrokerConfig({});
  assert.equal(c.get('num.partitions'), 1);
  assert.equal(c.get('default.replication.factor'), 1);
  assert.equal(c.get('log.segment.bytes'), 1073741824);
  assert.equal(c.get('log.retention.hours'), 168);
  assert.equal(c.get('log.retention.ms'), null);
  assert.equal(c.logRetentionMs, 604800000);
  assert.equal(c.logRollMs, 604800000);
  assert.equal(c.logRollJitterMs, 0);
  assert.equal(c.get('message.max.bytes'), 1048588);
  assert.equal(c.get('socket.request.max.bytes'), 104857600);
  assert.equal(c.get('replica.lag.time.max.ms'), 30000);
  assert.equal(c.get('replica.fetch.max.bytes'), 1048576);
  assert.equal(c.get('offsets.topic.num.partitions'), 50);
  assert.equal(c.get('offsets.topic.replication.factor'), 3);
  assert.equal(c.get('transaction.state.log.min.isr'), 2);
  assert.equal(c.get('group.initial.rebalance.delay.ms'), 3000);
  assert.equal(c.get('group.min.session.timeout.ms'), 6000);
  assert.equal(c.get('group.max.session.timeout.ms'), 1800000);
  assert.equal(c.get('group.consumer.heartbeat.interval.ms'), 5000);
  assert.deepEqual(c.get('group.coordinator.rebalance.protocols'), ['classic', 'consumer']);
  assert.equal(c.get('fetch.max.bytes'), 57671680);
  assert.equal(c.get('max.incremental.fetch.session.cache.slots'), 1000);
  assert.equal(c.get('auto.create.topics.enable'), true);
  assert.equal(c.get('unclean.leader.election.enable'), false);
  assert.equal(c.get('compression.type'), 'producer');
  assert.equal(c.get('log.cleaner.min.cleanable.ratio'), 0.5);
  assert.equal(c.get('log.message.timestamp.after.max.ms'), 3600000);
  assert.deepEqual(c.listeners, ['PLAINTEXT://:9092']);
  assert.deepEqual(c.advertisedListeners, ['PLAINTEXT://:9092']);
  assert.deepEqual(c.logDirs, ['/tmp/kafka-logs']);
  assert.equal(c.source('num.partitions'), 'default');
  assert.ok(Object.isFrozen(c) && Object.isFrozen(c.listeners));
});

test('every default in the table passes its own validator', () => {
  for (const def of [...BROKER_KEY_LIST, ...TOPIC_KEY_LIST]) {
    if (def.defaultValue !== null) parseValue(def, def.defaultValue);
  }
});

test('log.retention.ms falls back to minutes, then hours; negative means forever', () => {
  assert.equal(parseBrokerConfig({ 'log.retention.hours': '1' }).logRetentionMs, 3_600_000);
  assert.equal(parseBrokerConfig({ 'log.retention.hours': '1', 'log.retention.minutes': '5' }).logRetentionMs, 300_000);
  assert.equal(parseBrokerConfig({ 'log.retention.minutes': '5', 'log.retention.ms': '1234' }).logRetentionMs, 1234);
  assert.equal(parseBrokerConfig({ 'log.retention.ms': '-5' }).logRetentionMs, -1);
  assert.equal(parseBrokerConfig({ 'log.roll.hours': '2' }).logRollMs, 7_200_000);
  assert.equal(parseBrokerConfig({ 'log.flush.scheduler.interval.ms': '10' }).logFlushIntervalMs, 10);
});

test('the single-node defaults make a valid combined broker and controller', () => {
  const c = parseBrokerConfig(SINGLE_NODE_DEFAULTS, { 'log.dirs': '/data/a, /data/b' });
  assert.deepEqual(c.processRoles, ['broker', 'controller']);
  assert.equal(c.nodeId, 1);
  assert.deepEqual(c.controllerListenerNames, ['CONTROLLER']);
  assert.deepEqual(c.advertisedListeners, ['PLAINTEXT://localhost:9092']);
  assert.deepEqual(c.logDirs, ['/data/a', '/data/b']);
  assert.equal(c.source('log.dirs'), 'override');
  assert.equal(c.source('node.id'), 'static');
});

test('advertised.listeners defaults to listeners without the controller listener', () => {
  const props = { ...SINGLE_NODE_DEFAULTS } as Record<string, string>;
  delete props['advertised.listeners'];
  assert.deepEqual(parseBrokerConfig(props).advertisedListeners, ['PLAINTEXT://:9092']);
});

test('an unknown key is rejected by name with a did-you-mean suggestion', () => {
  assert.throws(() => parseBrokerConfig({ 'log.retention.hour': '3' }), (e: unknown) => {
    assert.ok(e instanceof BrokerConfigError && e instanceof ConfigError);
    assert.match(e.message, /Unknown broker configuration "log.retention.hour" \(did you mean "log.retention.hours"\?\)/);
    assert.equal(e.problems[0]!.errorCode, 'INVALID_CONFIG');
    return true;
  });
  assert.throws(() => parseBrokerConfig({ 'zzzz.qqqq': '1' }), (e: unknown) => e instanceof ConfigError && !e.message.includes('did you mean'));
});

test('invalid values name the key, the value and the rule, and all problems are reported', () => {
  assert.throws(() => parseBrokerConfig({ 'num.partitions': '0', 'auto.create.topics.enable': 'yes', 'socket.request.max.bytes': '99999999999', 'compression.type': 'brotli' }),
    (e: unknown) => {
      assert.ok(e instanceof BrokerConfigError);
      assert.equal(e.problems.length, 4);
      assert.match(e.message, /Invalid value "0" for configuration num.partitions: Value must be at least 1/);
      assert.match(e.message, /"yes" for configuration auto.create.topics.enable: Expected value to be either true or false/);
      assert.match(e.message, /socket.request.max.bytes/);
      assert.match(e.message, /"brotli" for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer/);
      return true;
    });
});

test('process.roles requires a node id, a quorum and controller listeners', () => {
  assert.throws(() => parseBrokerConfig({ 'process.roles': 'broker' }), (e: unknown) => {
    assert.ok(e instanceof BrokerConfigError);
    const names = e.problems.map((p) => p.name).sort();
    assert.deepEqual(names, ['controller.listener.names', 'controller.quorum.voters', 'node.id']);
    return true;
  });
  assert.throws(() => parseBrokerConfig({ ...SINGLE_NODE_DEFAULTS, 'listeners': 'PLAINTEXT://:9092' }), /must include the controller listener CONTROLLER/);
  assert.throws(() => parseBrokerConfig({ 'node.id': '1', 'broker.id': '2' }), /must match node.id/);
});

test('a server.properties file parses into a broker config', () => {
  const text = '# Logline\nprocess.roles=broker,controller\nnode.id=3\ncontroller.quorum.voters=3@localhost:9093\n' +
    'listeners=PLAINTEXT://:9092,CONTROLLER://:9093\ncontroller.listener.names=CONTROLLER\nlog.dirs=/var/lib/logline\n' +
    'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT\nnum.io.threads = 16\n';
  const c = parseBrokerConfig(parseProperties(text));
  assert.equal(c.nodeId, 3);
  assert.equal(c.get('num.io.threads'), 16);
  assert.deepEqual(c.logDirs, ['/var/lib/logline']);
});

test('listeners must be NAME://host:port with a name mapped to a security protocol', () => {
  assert.throws(() => parseBrokerConfig({ listeners: 'INTERNAL://:9092' }), /listener name INTERNAL is not in listener.security.protocol.map/);
  assert.throws(() => parseBrokerConfig({ listeners: 'PLAINTEXT:9092' }), /is not NAME:\/\/host:port/);
  assert.throws(() => parseBrokerConfig({ 'listener.security.protocol.map': 'A:TLS' }), /not NAME:PROTOCOL/);
  const c = parseBrokerConfig({ listeners: 'INTERNAL://[::1]:9092,EXTERNAL://0.0.0.0:19092', 'listener.security.protocol.map': 'INTERNAL:PLAINTEXT,EXTERNAL:SSL' });
  assert.deepEqual(c.advertisedListeners, ['INTERNAL://[::1]:9092', 'EXTERNAL://0.0.0.0:19092']);
});

test('ConfigSource and ConfigType ids are the ones Kafka writes', async () => {
  const { ConfigSource, ConfigTypeId } = await import('../../src/config/index.js');
  assert.deepEqual(ConfigSource, {
    UNKNOWN: 0, DYNAMIC_TOPIC_CONFIG: 1, DYNAMIC_BROKER_CONFIG: 2, DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
    STATIC_BROKER_CONFIG: 4, DEFAULT_CONFIG: 5, DYNAMIC_BROKER_LOGGER_CONFIG: 6, CLIENT_METRICS_CONFIG: 7, GROUP_CONFIG: 8,
  });
  assert.deepEqual(ConfigTypeId, { UNKNOWN: 0, BOOLEAN: 1, STRING: 2, INT: 3, SHORT: 4, LONG: 5, DOUBLE: 6, LIST: 7, CLASS: 8, PASSWORD: 9 });
});

test('a controller listener missing from listener.security.protocol.map speaks PLAINTEXT, as in Kafka', () => {
  const c = parseBrokerConfig({
    'process.roles': 'broker,controller', 'node.id': '1', 'controller.quorum.voters': '1@localhost:9093',
    listeners: 'PLAINTEXT://:9092,CTRL://:9093', 'controller.listener.names': 'CTRL', 'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT',
  });
  assert.equal(c.nodeId, 1);
  // Not a controller listener: still refused.
  assert.throws(() => parseBrokerConfig({ listeners: 'OTHER://:9092' }), /listener name OTHER is not in listener.security.protocol.map/);
});

test('KRaft misconfigurations are refused naming the key: a controller not among the voters, a controller listener advertised to clients', () => {
  const base = { 'process.roles': 'broker,controller', 'node.id': '2', listeners: 'PLAINTEXT://:9092,CONTROLLER://:9093', 'controller.listener.names': 'CONTROLLER' };
  assert.throws(() => parseBrokerConfig({ ...base, 'controller.quorum.voters': '1@localhost:9093' }), (e: unknown) => {
    assert.ok(e instanceof BrokerConfigError);
    assert.deepEqual(e.problems.map((p) => p.name), ['controller.quorum.voters']);
    assert.match(e.problems[0]!.message, /node.id 2 has the controller role but is not in controller.quorum.voters/);
    return true;
  });
  assert.throws(() => parseBrokerConfig({ ...base, 'controller.quorum.voters': '2@localhost:9093', 'advertised.listeners': 'PLAINTEXT://h:9092,CONTROLLER://h:9093' }), (e: unknown) => {
    assert.ok(e instanceof BrokerConfigError);
    assert.deepEqual(e.problems.map((p) => p.name), ['advertised.listeners']);
    return true;
  });
  // A broker-only node is no voter, and that is fine.
  const broker = parseBrokerConfig({ 'process.roles': 'broker', 'node.id': '4', 'controller.quorum.voters': '1@localhost:9093', listeners: 'PLAINTEXT://:9092', 'controller.listener.names': 'CONTROLLER' });
  assert.equal(broker.nodeId, 4);
});

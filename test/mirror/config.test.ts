// MirrorMaker 2's properties as a pure function: resolution order, defaults, refusals naming the key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseProperties } from '../../src/config/index.js';
import { MirrorConfigError, matches, parseMirrorConfig } from '../../src/mirror/index.js';

const parse = (text: string) => parseMirrorConfig(parseProperties(text));
const BASE = 'clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\n';

test('every ordered pair is a flow; only A->B.enabled ones mirror; MirrorMaker 2\'s defaults apply', () => {
  const c = parse(`${BASE}A->B.enabled = true\n`);
  assert.deepEqual(c.flows.map((f) => `${f.source}->${f.target}:${f.enabled}`), ['A->B:true', 'B->A:false']);
  const f = c.flows[0]!;
  assert.equal(f.replicationFactor, 2);
  assert.equal(f.offsetLagMax, 100);
  assert.equal(f.refreshTopicsIntervalMs, 600_000);
  assert.equal(f.emitHeartbeatsIntervalMs, 1000);
  assert.equal(f.syncGroupOffsets, false);
  assert.equal(f.offsetSyncsTopicLocation, 'source');
  assert.equal(f.exactlyOnce, false);
  assert.equal(f.policy.formatRemoteTopic('A', 'orders'), 'A.orders');
  assert.ok(matches(f.topics, 'orders'));
  assert.ok(!matches(f.topics, 'mm2-offsets.A.internal'), 'internal topics are excluded by default');
  assert.ok(!matches(f.groups, 'console-consumer-1'));
});

test('A->B.<key> overrides the top-level key for that flow only; cluster keys configure that cluster\'s client', () => {
  const c = parse(`${BASE}A->B.enabled = true\nB->A.enabled = true\ntopics = orders.*\nA->B.topics = pay.*, ship\nsecurity.protocol = SASL_PLAINTEXT\nA.sasl.mechanism = PLAIN\nA.sasl.jaas.config = x\nB.exactly.once.source.support = enabled\n`);
  const ab = c.flows.find((f) => f.source === 'A')!;
  const ba = c.flows.find((f) => f.source === 'B')!;
  assert.ok(matches(ab.topics, 'payments') && matches(ab.topics, 'ship') && !matches(ab.topics, 'orders') && !matches(ab.topics, 'shipping'));
  assert.ok(matches(ba.topics, 'orders-eu') && !matches(ba.topics, 'payments'));
  assert.equal(c.clusters.get('A')!.client.get('security.protocol'), 'SASL_PLAINTEXT');
  assert.equal(c.clusters.get('A')!.client.get('sasl.mechanism'), 'PLAIN');
  assert.equal(c.clusters.get('B')!.client.get('sasl.mechanism'), undefined);
  assert.equal(ab.exactlyOnce, true, 'B.exactly.once.source.support=enabled: flows into B are exactly once');
  assert.equal(ba.exactlyOnce, false);
});

test('IdentityReplicationPolicy, a separator, exactly.once.support and offset-syncs.topic.location are read', () => {
  const c = parse(`${BASE}A->B.enabled = true\nreplication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy\nexactly.once.support = enabled\noffset-syncs.topic.location = target\n`);
  const f = c.flows[0]!;
  assert.equal(f.policy.formatRemoteTopic('A', 'orders'), 'orders');
  assert.equal(f.policy.formatRemoteTopic('A', 'heartbeats'), 'A.heartbeats');
  assert.equal(f.exactlyOnce, true);
  assert.equal(f.offsetSyncsTopicLocation, 'target');
  const d = parse(`${BASE}replication.policy.separator = _\n`).flows[0]!;
  assert.equal(d.policy.formatRemoteTopic('A', 'orders'), 'A_orders');
  assert.equal(d.policy.offsetSyncsTopic('B'), 'mm2-offset-syncs_B_internal');
});

test('bad properties are refused naming the key', () => {
  const refused = (text: string, key: string) => assert.throws(() => parse(text), (e: unknown) => e instanceof MirrorConfigError && e.key === key, key);
  refused(`${BASE}A->B.enabeld = true\n`, 'A->B.enabeld');
  refused(`${BASE}linger.ms = 5\n`, 'linger.ms');
  refused(`${BASE}A.consumer.auto.offset.reset = latest\n`, 'A.consumer.auto.offset.reset');
  refused(`${BASE}A->C.enabled = true\n`, 'A->C.enabled');
  refused(`${BASE}A->B.enabled = yes\n`, 'A->B.enabled');
  refused(`${BASE}topics = orders(\n`, 'topics');
  refused(`${BASE}replication.factor = two\n`, 'replication.factor');
  refused(`${BASE}offset-syncs.topic.location = elsewhere\n`, 'offset-syncs.topic.location');
  refused(`${BASE}replication.policy.class = com.example.MyPolicy\n`, 'replication.policy.class');
  refused(`${BASE}exactly.once.support = maybe\n`, 'exactly.once.support');
  refused('A.bootstrap.servers = a:9092\n', 'clusters');
  refused('clusters = A, B\nA.bootstrap.servers = a:9092\n', 'B.bootstrap.servers');
  // Keys real MirrorMaker 2 files carry that mean nothing here are accepted.
  parse(`${BASE}tasks.max = 4\nconfig.storage.replication.factor = 1\n`);
});

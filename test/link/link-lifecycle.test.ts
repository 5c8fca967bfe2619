// A cluster link's life after its mirror topics are made (issue 35, part 2), with two single-node
// `logline server` processes, A (source) and B (target): the source topic's configs follow onto
// the mirror topic (topic.config.sync.ms) while B's own keys stay; partitions added at the source
// (CreatePartitions on A) appear on B within the link's metadata.max.age.ms and hold A's records at
// the same offsets; `logline link delete` is refused while mirror topics use the link, and with
// --force removes the link from B's metadata (also after a restart of B) and stops its fetchers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { ClusterClient, describeTopicConfigs } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { runProcess } from '../broker/process-helpers.js';
import { eventually, readAll } from '../mirror/helpers.js';
import { cli, sourceAndTarget, ends, sleep, view } from './helpers.js';

const TOPIC = 2;

test('mirror topics follow their source topics\' configs and partition counts; link delete refused while used, forced removes it', { timeout: 240_000 }, async (t) => {
  const { a, b } = await sourceAndTarget(t);
  const aClient = new ClusterClient({ bootstrap: a.bootstrap });
  const bClient = new ClusterClient({ bootstrap: b.bootstrap });
  t.after(() => { aClient.close(); bClient.close(); });
  const created = await aClient.admin(ApiKey.CreateTopics, { topics: [
    { name: 'grow', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [{ name: 'retention.ms', value: '7200000' }, { name: 'max.message.bytes', value: '500000' }] },
    { name: 'keep', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] },
  ], timeoutMs: 30_000, validateOnly: false }, 7);
  assert.deepEqual(created.topics.map((x: { errorCode: number }) => x.errorCode), [0, 0]);
  await aClient.retrying(() => aClient.topic('grow'));

  const props = join(b.dir, 'link.properties');
  writeFileSync(props, 'metadata.max.age.ms=1000\ntopic.config.sync.ms=500\n');
  assert.match(await cli(['link', 'create', 'dr', '--source', a.bootstrap, '--source-config', props, '-b', b.bootstrap]), /created link dr/);
  assert.match(await cli(['link', 'create', 'spare', '--source', a.bootstrap, '-b', b.bootstrap]), /created link spare/);
  await cli(['link', 'mirror', 'dr', 'grow', 'keep', '-b', b.bootstrap]);

  const kafka = new Kafka({ brokers: [a.bootstrap], clientId: 'link-lifecycle', logLevel: logLevel.NOTHING });
  let producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  t.after(() => producer.disconnect().catch(() => {}));
  const write = async (partition: number, n: number, tag: string) => {
    await producer.send({ topic: 'grow', acks: -1, messages: Array.from({ length: n }, (_, i) => ({ key: `${tag}-k${i % 5}`, value: `${tag}-v${i}`, partition, headers: { h: tag } })) });
  };
  await write(0, 30, 'first');

  // Config sync: the source topic's own settings of the synced list arrive on the mirror; B's own
  // keys (link.name, and segment.ms, which is not synced) stay.
  const own = async (client: ClusterClient, topic: string) =>
    new Map((await describeTopicConfigs(client, topic)).filter((c) => c.source === 'DYNAMIC_TOPIC_CONFIG').map((c) => [c.name, c.value]));
  const alter = async (client: ClusterClient, topic: string, configs: { name: string; configOperation: number; value: string | null }[]) => {
    const r = await client.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: TOPIC, resourceName: topic, configs }], validateOnly: false }, 1);
    assert.equal(r.responses[0].errorCode, 0, r.responses[0].errorMessage);
  };
  await eventually('grow\'s retention.ms and max.message.bytes on B as on A', 60_000, async () => {
    const c = await own(bClient, 'grow');
    return c.get('retention.ms') === '7200000' && c.get('max.message.bytes') === '500000';
  });
  await alter(bClient, 'grow', [{ name: 'segment.ms', configOperation: 0, value: '1200000' }]);
  await alter(aClient, 'grow', [
    { name: 'retention.ms', configOperation: 0, value: '3600000' }, { name: 'cleanup.policy', configOperation: 0, value: 'compact,delete' },
    { name: 'max.message.bytes', configOperation: 1, value: null }, { name: 'segment.ms', configOperation: 0, value: '600000' },
  ]);
  await eventually('A\'s changes to grow on B (set, changed, removed)', 60_000, async () => {
    const c = await own(bClient, 'grow');
    return c.get('retention.ms') === '3600000' && c.get('cleanup.policy') === 'compact,delete' && !c.has('max.message.bytes');
  });
  const synced = await own(bClient, 'grow');
  assert.equal(synced.get('link.name'), 'dr', 'link.name is B\'s own');
  assert.equal(synced.get('segment.ms'), '1200000', 'segment.ms is not synced: B\'s value stays');
  assert.equal((await own(bClient, 'keep')).get('link.name'), 'dr');

  // Partitions added at the source: B's mirror grows within metadata.max.age.ms (1 s here) and the
  // new partitions hold A's records at the same offsets.
  const grown = await aClient.admin(ApiKey.CreatePartitions, { topics: [{ name: 'grow', count: 3, assignments: null }], timeoutMs: 30_000, validateOnly: false }, 3);
  assert.equal(grown.results[0].errorCode, 0, grown.results[0].errorMessage);
  await aClient.retrying(async () => { const x = await aClient.topic('grow'); assert.equal(x.partitions.length, 3); return x; });
  // kafkajs keeps the partition count it first saw (a record for a partition beyond it is dropped
  // without an error): a new producer for the grown topic.
  await producer.disconnect();
  producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  await write(1, 25, 'p1');
  await write(2, 40, 'p2');
  await write(0, 5, 'p0');
  await eventually('B\'s grow to have 3 partitions', 60_000, async () => (await bClient.metadata(['grow']))[0]?.partitions.length === 3);
  await eventually('B\'s grow to hold A\'s records in all 3 partitions', 60_000, async () => {
    const [onA, onB] = await Promise.all([ends(a.bootstrap, 'grow', 3), ends(b.bootstrap, 'grow', 3).catch(() => [-1, -1, -1])]);
    return onA.join() === '35,25,40' && onA.join() === onB.join();
  });
  const [onA, onB] = await Promise.all([readAll(a.bootstrap, 'grow', 3), readAll(b.bootstrap, 'grow', 3)]);
  assert.deepEqual([0, 1, 2].map((p) => onB.get(p)!.length), [35, 25, 40]);
  for (const p of [0, 1, 2]) assert.deepEqual(view(onB.get(p)!), view(onA.get(p)!), `partition ${p}: same offsets, timestamps, keys, values, headers`);

  // Delete: refused while mirror topics use the link, naming them; a link without any goes.
  const refused = await runProcess(process.execPath, ['bin/logline.js', 'link', 'delete', 'dr', '-b', b.bootstrap], null, 60_000);
  assert.notEqual(refused.code, 0, 'link delete with mirror topics is refused');
  assert.match(refused.stderr + refused.stdout, /link dr still has 2 mirror topic\(s\): grow, keep; promote them first .*--force/);
  assert.match(await cli(['link', 'delete', 'spare', '-b', b.bootstrap]), /deleted link spare/);
  assert.match(await cli(['link', 'promote', 'keep', '-b', b.bootstrap]), /promoted keep/);
  const stillRefused = await runProcess(process.execPath, ['bin/logline.js', 'link', 'delete', 'dr', '-b', b.bootstrap], null, 60_000);
  assert.notEqual(stillRefused.code, 0);
  assert.match(stillRefused.stderr + stillRefused.stdout, /link dr still has 1 mirror topic\(s\): grow;/);
  // Still mirroring before the forced delete.
  await write(1, 10, 'before-delete');
  await eventually('the write before the delete on B', 60_000, async () => (await ends(b.bootstrap, 'grow', 3))[1] === 35);
  assert.match(await cli(['link', 'delete', 'dr', '--force', '-b', b.bootstrap]), /deleted link dr \(its mirror topics grow stay read-only until promoted\)/);

  // Gone from the metadata: no keys left, its fetchers stopped, A's new records no longer arrive.
  const linkKeys = async (client = bClient) => {
    const r = await client.admin(ApiKey.DescribeConfigs, { resources: [{ resourceType: 64, resourceName: 'dr', configurationKeys: null }], includeSynonyms: false, includeDocumentation: false }, 4);
    return r.results[0].configs.filter((c: { configSource: number }) => c.configSource !== 5).map((c: { name: string }) => c.name);
  };
  assert.deepEqual(await linkKeys(), []);
  await eventually('/v1/links on B to show no mirror partition', 30_000, async () => {
    const body = await (await fetch(`${b.http}/v1/links`)).json() as { partitions: unknown[] };
    return body.partitions.length === 0;
  });
  await write(1, 10, 'after-delete');
  await write(2, 10, 'after-delete');
  await sleep(2000);
  assert.deepEqual(await ends(b.bootstrap, 'grow', 3), [35, 35, 40], 'nothing mirrored after the link was deleted');
  const again = await runProcess(process.execPath, ['bin/logline.js', 'link', 'delete', 'dr', '-b', b.bootstrap], null, 60_000);
  assert.notEqual(again.code, 0);
  assert.match(again.stderr + again.stdout, /no link named dr/);

  // The deletion is in B's metadata log: after a restart the link is still gone and nothing arrives.
  await b.kill();
  await b.start();
  await eventually('B back with its topic', 60_000, async () => (await ends(b.bootstrap, 'grow', 3).catch(() => [])).length === 3);
  const restarted = new ClusterClient({ bootstrap: b.bootstrap });
  t.after(() => restarted.close());
  assert.deepEqual(await linkKeys(restarted), []);
  await sleep(2000);
  assert.deepEqual(await ends(b.bootstrap, 'grow', 3), [35, 35, 40], 'nothing mirrored after the restart');
  assert.deepEqual(((await (await fetch(`${b.http}/v1/links`)).json()) as { partitions: unknown[] }).partitions, []);
  // The orphaned mirror topic is still read-only and can be promoted.
  assert.match(await cli(['link', 'promote', 'grow', '-b', b.bootstrap]), /promoted grow .*link dr no longer exists/);
});

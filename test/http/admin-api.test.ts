// The /v1 admin API as the console and scripts use it, against a single node with data: topics
// with offsets and sizes, configs, consumer groups with lag (also in /metrics), message browsing
// (newest first; by offset and by time), and the mutations — each checked through the Kafka APIs
// afterwards, as a client would see it — with their guards (loopback or admin credentials, JSON
// only, body size limit).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { Kafka, logLevel } from 'kafkajs';
import { parseBrokerConfig } from '../../src/config/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { describeTopicConfigs } from '../../src/client/index.js';
import { limits } from '../../src/util/index.js';
import { mutationRefusal } from '../../src/http/server.js';
import type { GroupLag, TopicRow } from '../../src/http/index.js';
import type { ServerHandle } from '../../src/index.js';
import { commit, startConsoleFixture, until } from './console-fixture.js';

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  const res = await fetch(base + path, {
    method, headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}
const b64 = (s: string) => Buffer.from(s).toString('base64');
const text = (b: string | null) => (b === null ? null : Buffer.from(b, 'base64').toString());

test('admin API reads: topics with partitions, offsets and sizes; configs; a group\'s lag per partition, also in /metrics; messages newest first, from an offset, from a time', async () => {
  const f = await startConsoleFixture();
  try {
    const topics = (await call(f.http, 'GET', '/v1/topics')).json.topics as TopicRow[];
    const orders = topics.find((t) => t.name === 'orders')!;
    assert.deepEqual(orders.partitions.map((p) => [p.partition, p.leader, p.replicas, p.isr, p.logStartOffset, p.highWatermark, p.underReplicated, p.offline]),
      [[0, 1, [1], [1], 0, 5, false, false], [1, 1, [1], [1], 0, 1, false, false], [2, 1, [1], [1], 0, 0, false, false]]);
    assert.ok(orders.partitions[0]!.sizeBytes! > 5 * 30, `orders-0 has its five records on disk: ${orders.partitions[0]!.sizeBytes}`);
    assert.equal(orders.partitions[2]!.sizeBytes, 0);

    const configs = (await call(f.http, 'GET', '/v1/topics/orders/configs')).json.configs as { name: string; value: string; source: string }[];
    assert.equal(configs.find((c) => c.name === 'cleanup.policy')?.value, 'delete');
    assert.equal((await call(f.http, 'GET', '/v1/topics/nope/configs')).status, 404);
    assert.equal((await call(f.http, 'GET', '/v1/topics/nope')).status, 404);

    const g = (await call(f.http, 'GET', '/v1/groups/billing')).json as GroupLag;
    assert.equal(g.state, 'Empty');
    assert.deepEqual(g.partitions.map((p) => [p.topic, p.partition, p.committedOffset, p.logEndOffset, p.lag]), [['orders', 0, 2, 5, 3]]);
    assert.equal(g.totalLag, 3);
    const list = (await call(f.http, 'GET', '/v1/groups')).json.groups as { groupId: string; totalLag: number; state: string }[];
    assert.deepEqual(list.map((x) => [x.groupId, x.state, x.totalLag]), [['billing', 'Empty', 3]]);
    const scrape = await (await fetch(`${f.http}/metrics`)).text();
    assert.match(scrape, /^kafka_consumergroup_lag\{group="billing",topic="orders",partition="0"\} 3$/m);
    assert.match(scrape, /^kafka_consumergroup_current_offset\{group="billing",topic="orders",partition="0"\} 2$/m);
    assert.match(scrape, /^kafka_consumergroup_log_end_offset\{group="billing",topic="orders",partition="0"\} 5$/m);

    const newest = (await call(f.http, 'GET', '/v1/topics/orders/messages?partition=0&count=2')).json;
    assert.deepEqual(newest.messages.map((m: any) => [m.offset, text(m.key), JSON.parse(text(m.value)!).id, m.headers.map((h: any) => `${h.key}=${text(h.value)}`)]),
      [[4, 'order-5', 5, ['source=web']], [3, 'order-4', 4, ['source=web']]]);
    const fromOffset = (await call(f.http, 'GET', '/v1/topics/orders/messages?partition=0&offset=1&count=2')).json;
    assert.deepEqual(fromOffset.messages.map((m: any) => m.offset), [2, 1], 'two from offset 1, newest first');
    const all = (await call(f.http, 'GET', '/v1/topics/orders/messages')).json;
    assert.equal(all.messages.length, 6, 'every partition when none is named');
    const future = (await call(f.http, 'GET', `/v1/topics/orders/messages?partition=0&timestamp=${Date.now() + 60_000}`)).json;
    assert.deepEqual(future.messages, [], 'nothing at or after a time still to come');
    const past = (await call(f.http, 'GET', '/v1/topics/orders/messages?partition=0&timestamp=0&count=500')).json;
    assert.equal(past.messages.length, 5);
    const binary = (await call(f.http, 'GET', '/v1/topics/audit/messages')).json;
    assert.deepEqual([...Buffer.from(binary.messages[0].value, 'base64')], [0x00, 0xff, 0x10, 0x80]);
    assert.equal((await call(f.http, 'GET', `/v1/topics/orders/messages?count=${limits.httpMessagesMax + 1000}&partition=0`)).status, 200);
    assert.equal((await call(f.http, 'GET', '/v1/topics/orders/messages?partition=9')).status, 404);
    assert.equal((await call(f.http, 'GET', '/v1/topics/orders/messages?offset=x')).status, 400);
  } finally {
    await f.close();
  }
});

test('admin API mutations go through Kafka: a created topic, an altered config, a produced message and a deletion are what Kafka clients then see', async () => {
  const f = await startConsoleFixture();
  try {
    const created = await call(f.http, 'POST', '/v1/topics', { name: 'payments', partitions: 2, configs: { 'retention.ms': '3600000' } });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    assert.equal(created.json.partitions, 2);
    const t = await f.client.topic('payments');
    assert.equal(t.partitions.length, 2);
    assert.equal((await describeTopicConfigs(f.client, 'payments')).find((c) => c.name === 'retention.ms')?.value, '3600000');
    const again = await call(f.http, 'POST', '/v1/topics', { name: 'payments' });
    assert.equal(again.status, 409);
    assert.equal(again.json.error, 'TOPIC_ALREADY_EXISTS');
    assert.equal((await call(f.http, 'POST', '/v1/topics', { name: 'bad name!' })).json.error, 'INVALID_TOPIC_EXCEPTION');
    assert.equal((await call(f.http, 'POST', '/v1/topics', { partitions: 1 })).status, 400);

    const altered = await call(f.http, 'PUT', '/v1/topics/payments/configs', { set: { 'retention.ms': '7200000', 'cleanup.policy': 'compact' } });
    assert.equal(altered.status, 200, JSON.stringify(altered.json));
    const after = await describeTopicConfigs(f.client, 'payments');
    assert.equal(after.find((c) => c.name === 'retention.ms')?.value, '7200000');
    assert.equal(after.find((c) => c.name === 'cleanup.policy')?.value, 'compact');
    assert.equal((await call(f.http, 'PUT', '/v1/topics/payments/configs', { set: { 'retention.ms': 'soon' } })).status, 400);
    await call(f.http, 'PUT', '/v1/topics/payments/configs', { delete: ['cleanup.policy'] });
    assert.equal((await describeTopicConfigs(f.client, 'payments')).find((c) => c.name === 'cleanup.policy')?.source, 'DEFAULT_CONFIG');

    const produced = await call(f.http, 'POST', '/v1/topics/payments/messages', { partition: 1, key: 'p-1', value: '{"amount":12}', headers: [{ key: 'trace', value: 'abc' }] });
    assert.equal(produced.status, 201, JSON.stringify(produced.json));
    assert.deepEqual(produced.json, { topic: 'payments', partition: 1, offset: 0 });
    const binary = await call(f.http, 'POST', '/v1/topics/payments/messages', { partition: 1, value: Buffer.from([1, 2, 255]).toString('base64'), encoding: 'base64' });
    assert.equal(binary.json.offset, 1);
    const conn = await f.client.leaderFor('payments', 1);
    const fetched = await conn.send(ApiKey.Fetch, 11, {
      replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: 'payments', partitions: [{ partition: 1, currentLeaderEpoch: -1, fetchOffset: 0n, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }], forgottenTopicsData: [], rackId: '',
    });
    assert.equal(fetched.responses[0].partitions[0].highWatermark, 2n, 'both messages are in the log a consumer reads');
    const browsed = (await call(f.http, 'GET', '/v1/topics/payments/messages?partition=1')).json.messages;
    assert.deepEqual(browsed.map((m: any) => [m.offset, text(m.key), m.value]), [[1, null, Buffer.from([1, 2, 255]).toString('base64')], [0, 'p-1', b64('{"amount":12}')]]);
    assert.equal((await call(f.http, 'POST', '/v1/topics/nope/messages', { value: 'x' })).status, 404);

    await commit(f.client, 'billing', 'payments', 1, 1n);
    assert.deepEqual((await call(f.http, 'GET', '/v1/groups/billing')).json.partitions.map((p: any) => [p.topic, p.partition, p.lag]), [['orders', 0, 3], ['payments', 1, 1]]);
    assert.equal((await call(f.http, 'DELETE', '/v1/topics/payments')).status, 200);
    await until(10_000, 'payments gone', async () => ((await f.client.metadata(['payments']))[0]?.errorCode !== 0 ? true : undefined));
    const orphaned = (await call(f.http, 'GET', '/v1/groups/billing')).json as GroupLag;
    // Kafka drops a deleted topic's committed offsets; where they are still there, they have no end offset or lag.
    assert.deepEqual(orphaned.partitions.filter((p) => p.topic === 'orders').map((p) => [p.partition, p.committedOffset, p.logEndOffset, p.lag]), [[0, 2, 5, 3]]);
    assert.ok(orphaned.partitions.filter((p) => p.topic === 'payments').every((p) => p.logEndOffset === null && p.lag === null), JSON.stringify(orphaned.partitions));
    assert.equal((await call(f.http, 'DELETE', '/v1/topics/__consumer_offsets')).status, 400, 'internal topics are not deleted');

    // Guards: JSON only, a bounded body, no cross-site writes.
    const form = await fetch(`${f.http}/v1/topics`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=x' });
    assert.equal(form.status, 403);
    const big = await call(f.http, 'POST', '/v1/topics/orders/messages', { value: 'x'.repeat(limits.httpRequestBodyBytesMax) });
    assert.equal(big.status, 413);
    const cross = await call(f.http, 'POST', '/v1/topics', { name: 'evil' }, { origin: 'http://attacker.example' });
    assert.equal(cross.status, 403);
    assert.match(cross.json.reason, /cross-origin/);
    assert.equal((await call(f.http, 'PATCH', '/v1/topics')).status, 405);
  } finally {
    await f.close();
  }
});

test('mutations on a listener off loopback: refused with a reason unless the request carries http.admin.username/password', () => {
  const req = (headers: Record<string, string>) => ({ method: 'POST', headers: { host: 'broker:9644', 'content-type': 'application/json', ...headers } }) as unknown as IncomingMessage;
  const node = (settings: Record<string, string>) => ({ config: parseBrokerConfig({ 'node.id': '1', ...settings }) }) as unknown as ServerHandle;
  const basic = (u: string, p: string) => ({ authorization: `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}` });
  assert.equal(mutationRefusal(node({}), '127.0.0.1', req({})), null, 'loopback: allowed');
  assert.equal(mutationRefusal(node({}), '::1', req({})), null);
  assert.match(mutationRefusal(node({}), '0.0.0.0', req({}))!, /read-only/);
  const secured = node({ 'http.admin.username': 'admin', 'http.admin.password': 's3cret' });
  assert.match(mutationRefusal(secured, '10.0.0.5', req({}))!, /HTTP Basic/);
  assert.match(mutationRefusal(secured, '10.0.0.5', req(basic('admin', 'wrong')))!, /wrong admin credentials/);
  assert.equal(mutationRefusal(secured, '10.0.0.5', req(basic('admin', 's3cret'))), null);
  assert.match(mutationRefusal(secured, '127.0.0.1', req(basic('admin', 'wrong')))!, /wrong/, 'wrong credentials are refused even on loopback');
});

test('a group with a live member: its client id, host and assignment, and lag per assigned partition', async () => {
  const f = await startConsoleFixture();
  const kafka = new Kafka({ clientId: 'console-test', brokers: [f.bootstrap], logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: 'live', sessionTimeout: 10_000, heartbeatInterval: 500 });
  try {
    await consumer.connect();
    await consumer.subscribe({ topic: 'orders', fromBeginning: true });
    let seen = 0;
    await consumer.run({ autoCommit: false, eachMessage: async () => { seen++; } });
    const g = await until(30_000, 'the live group stable with its member', async () => {
      const r = await call(f.http, 'GET', '/v1/groups/live');
      return r.status === 200 && r.json.state === 'Stable' && r.json.members.length === 1 && seen === 6 ? r.json as GroupLag : undefined;
    });
    assert.equal(g.members[0]!.clientId, 'console-test');
    assert.match(g.members[0]!.host, /127\.0\.0\.1/);
    assert.deepEqual(g.members[0]!.assignment.map((a) => a.partition).sort(), [0, 1, 2]);
    assert.deepEqual(g.partitions.map((p) => [p.partition, p.committedOffset, p.logEndOffset, p.lag, p.clientId]),
      [[0, null, 5, null, 'console-test'], [1, null, 1, null, 'console-test'], [2, null, 0, null, 'console-test']], 'nothing committed yet: no lag to show');
  } finally {
    await consumer.disconnect();
    await f.close();
  }
});

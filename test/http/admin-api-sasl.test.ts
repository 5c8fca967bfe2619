// The admin API (and so the console) on a node whose only Kafka listener is SASL: the HTTP room's
// own client logs in with the listener's inter-broker credentials, so topics can be created,
// written and read over HTTP; without those credentials it answers 502 and says why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { startHttpListener } from '../../src/http/index.js';
import { tempDataDir } from '../broker/process-helpers.js';

const quiet = { info: () => {}, warn: () => {}, error: () => {} };

async function node(jaas: string, interBroker = 'SASL_PLAINTEXT') {
  const config = parseBrokerConfig({
    'node.id': '1',
    'listeners': 'SASL_PLAINTEXT://127.0.0.1:0,REPLICATION://127.0.0.1:0',
    'listener.security.protocol.map': 'SASL_PLAINTEXT:SASL_PLAINTEXT,REPLICATION:PLAINTEXT',
    'inter.broker.listener.name': interBroker,
    'sasl.enabled.mechanisms': 'PLAIN',
    'sasl.mechanism.inter.broker.protocol': 'PLAIN',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': jaas,
    'http.listener': '127.0.0.1:0',
  });
  const server = await startServer({ config, dataDir: tempDataDir(), logger: quiet, http: startHttpListener });
  return { server, base: `http://127.0.0.1:${server.http!.port}` };
}

test('the admin API works on a SASL-only node: it logs in as the brokers do, creates a topic, produces and reads a message', async () => {
  const { server, base } = await node('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret";');
  try {
    const created = await fetch(`${base}/v1/topics`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'audit', partitions: 1 }) });
    assert.equal(created.status, 201, await created.text());
    const produced = await fetch(`${base}/v1/topics/audit/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ partition: 0, value: 'hello over SASL' }) });
    assert.equal(produced.status, 201, await produced.text());
    const read = await (await fetch(`${base}/v1/topics/audit/messages?partition=0`)).json() as { messages: { value: string }[] };
    assert.deepEqual(read.messages.map((m) => Buffer.from(m.value, 'base64').toString()), ['hello over SASL']);
    const topics = await (await fetch(`${base}/v1/topics`)).json() as { topics: { name: string; partitions: { sizeBytes: number | null }[] }[] };
    assert.ok(topics.topics.find((t) => t.name === 'audit')!.partitions[0]!.sizeBytes! > 0, 'sizes come from DescribeLogDirs over SASL');
  } finally {
    await server.close();
  }
});

test('without credentials of its own on the SASL listener the admin API answers 502 with the reason', async () => {
  // The brokers talk over a PLAINTEXT listener here, so the client listener's entry has users only.
  const { server, base } = await node('org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret";', 'REPLICATION');
  try {
    const res = await fetch(`${base}/v1/topics/none/messages?partition=0`);
    assert.equal(res.status, 502);
    assert.match(await res.text(), /username and password/);
  } finally {
    await server.close();
  }
});

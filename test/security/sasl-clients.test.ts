// Real clients over SASL_SSL, each with SCRAM-SHA-512 (a credential written at first start, as
// `logline server --add-scram` does) and with PLAIN (users from the listener's JAAS entry), and
// over mTLS (an SSL listener with ssl.client.auth=required and the dev client certificate): kcat,
// confluent-kafka-python, kafka-python, kafkajs, @platformatic/kafka and
// @confluentinc/kafka-javascript create or list topics, produce, and consume in a group.
// One broker for the whole file; a few records per client keep the matrix fast.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Kafka, logLevel } from 'kafkajs';
import { runProcess, tempDataDir, within } from '../broker/process-helpers.js';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { parseAddScram, scramCredentialRecord, writeDevCerts, type DevCerts } from '../../src/security/index.js';
import { pemListenerTls } from './tls-config.js';

const hasKcat = spawnSync('kcat', ['-V']).status === 0;
const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
const PYTHON = '/usr/bin/python3';
const hasPy = (mod: string) => spawnSync(PYTHON, ['-c', `import ${mod}`]).status === 0;
if (process.env.CI && (!hasKcat || !hasOpenssl)) throw new Error('kcat and openssl are needed in CI');

const COUNT = 20;
const CREDENTIALS = {
  'SCRAM-SHA-512': { username: 'scram-user', password: 'scram-secret' },
  'PLAIN': { username: 'plain-user', password: 'plain-secret' },
} as const;
type Mechanism = keyof typeof CREDENTIALS | 'mTLS';
const MECHANISMS: Mechanism[] = ['SCRAM-SHA-512', 'PLAIN', 'mTLS'];
const over = (m: Mechanism) => (m === 'mTLS' ? 'over mTLS' : `over SASL_SSL with ${m}`);
const expected = Array.from({ length: COUNT }, (_, i) => `v${i}`);

let certs: DevCerts;
let server: ServerHandle | null = null;
let saslBootstrap = '';
let mtlsBootstrap = '';
const bootstrapFor = (m: Mechanism) => (m === 'mTLS' ? mtlsBootstrap : saslBootstrap);
/** User name and password, or for mTLS the client's certificate and key files. */
const credentials = (m: Mechanism) => (m === 'mTLS' ? { username: certs.clientCert, password: certs.clientKey } : CREDENTIALS[m]);

before(async () => {
  if (!hasOpenssl) return;
  certs = writeDevCerts(join(mkdtempSync(join(tmpdir(), 'logline-sasl-')), 'certs'));
  const config = parseBrokerConfig({
    'node.id': '1',
    'listeners': 'SASL_SSL://127.0.0.1:0,SSL://127.0.0.1:0',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL',
    ...pemListenerTls(certs),
    'listener.name.ssl.ssl.client.auth': 'required',
    ...pemListenerTls(certs, 'sasl_ssl'),
    'listener.name.sasl_ssl.sasl.enabled.mechanisms': 'SCRAM-SHA-512,PLAIN',
    'listener.name.sasl_ssl.plain.sasl.jaas.config': `org.apache.kafka.common.security.plain.PlainLoginModule required user_plain-user="plain-secret";`,
    'group.initial.rebalance.delay.ms': '0',
    'num.partitions': '2',
  });
  server = await startServer({
    config, dataDir: tempDataDir(),
    bootstrapRecords: [scramCredentialRecord(parseAddScram('SCRAM-SHA-512=[name=scram-user,password=scram-secret]'))],
  });
  saslBootstrap = `127.0.0.1:${server.listeners.find((l) => l.name === 'SASL_SSL')!.port}`;
  mtlsBootstrap = `127.0.0.1:${server.listeners.find((l) => l.name === 'SSL')!.port}`;
});

after(async () => { await server?.close(); });

const sorted = (values: string[]) => [...values].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
const topicFor = (client: string, m: Mechanism) => `sasl-${client}-${m.toLowerCase()}`;
const skipNoOpenssl = hasOpenssl ? false : 'openssl is not installed';

const kcatArgs = (m: Mechanism) => (m === 'mTLS'
  ? ['-b', mtlsBootstrap, '-X', 'security.protocol=SSL', '-X', `ssl.certificate.location=${certs.clientCert}`, '-X', `ssl.key.location=${certs.clientKey}`]
  : ['-b', saslBootstrap, '-X', 'security.protocol=SASL_SSL', '-X', `sasl.mechanism=${m}`,
    '-X', `sasl.username=${CREDENTIALS[m].username}`, '-X', `sasl.password=${CREDENTIALS[m].password}`])
  .concat(['-X', `ssl.ca.location=${certs.caCert}`]);

for (const m of MECHANISMS) {
  test(`kcat ${over(m)}: metadata, produce, consume in a group`, { skip: skipNoOpenssl || (hasKcat ? false : 'kcat is not installed'), timeout: 60_000 }, async () => {
    const topic = topicFor('kcat', m);
    const p = await runProcess('kcat', ['-P', ...kcatArgs(m), '-t', topic, '-K', ':', '-X', 'acks=all'], expected.map((v, i) => `k${i}:${v}`).join('\n') + '\n');
    assert.equal(p.code, 0, p.stderr);
    const meta = JSON.parse((await runProcess('kcat', ['-L', '-J', ...kcatArgs(m), '-t', topic])).stdout);
    assert.equal(meta.topics[0].partitions.length, 2);
    const c = await runProcess('kcat', ['-G', `kcat-${m}`, ...kcatArgs(m), '-X', 'auto.offset.reset=earliest', '-c', String(COUNT), '-q', '-f', '%s\\n', topic], null, 45_000);
    assert.equal(c.code, 0, c.stderr);
    assert.deepEqual(sorted(c.stdout.trim().split('\n')), expected);
  });
}

for (const [name, module, lib] of [['confluent-kafka-python', 'confluent_kafka', 'confluent'], ['kafka-python', 'kafka', 'kafka-python']] as const) {
  for (const m of MECHANISMS) {
    test(`${name} ${over(m)}: create a topic, produce, consume in a group`, { skip: skipNoOpenssl || (hasPy(module) ? false : `${name} is not installed`), timeout: 60_000 }, async () => {
      const { username, password } = credentials(m);
      const r = await runProcess(PYTHON, ['test/security/python/sasl_roundtrip.py', lib, bootstrapFor(m), m, username, password, certs.caCert, topicFor(lib, m), String(COUNT)], null, 55_000);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout.trim().split('\n').pop()!).values, expected);
    });
  }
}

for (const m of MECHANISMS) {
  test(`kafkajs ${over(m)}: create a topic, produce, consume in a group`, { skip: skipNoOpenssl, timeout: 60_000 }, async () => {
    const ca = [readFileSync(certs.caCert, 'utf8')];
    const security = m === 'mTLS'
      ? { ssl: { ca, cert: readFileSync(certs.clientCert, 'utf8'), key: readFileSync(certs.clientKey, 'utf8') } }
      : { ssl: { ca }, sasl: m === 'PLAIN' ? { mechanism: 'plain' as const, ...CREDENTIALS[m] } : { mechanism: 'scram-sha-512' as const, ...CREDENTIALS[m] } };
    const kafka = new Kafka({ clientId: 'sasl-kafkajs', brokers: [bootstrapFor(m)], ...security, logLevel: logLevel.NOTHING });
    const topic = topicFor('kafkajs', m);
    const admin = kafka.admin();
    await admin.connect();
    const producer = kafka.producer();
    const consumer = kafka.consumer({ groupId: `kafkajs-${m}`, sessionTimeout: 10_000, heartbeatInterval: 500 });
    try {
      await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] });
      await producer.connect();
      await producer.send({ topic, messages: expected.map((value, i) => ({ key: `k${i}`, value })) });
      const got: string[] = [];
      let done!: () => void;
      const all = new Promise<void>((r) => { done = r; });
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({ eachMessage: async ({ message }) => { got.push(message.value!.toString()); if (got.length === COUNT) done(); } });
      await within(30_000, 'kafkajs consumes every record', all);
      assert.deepEqual(sorted(got), expected);
      assert.ok((await admin.listTopics()).includes(topic));
    } finally {
      await consumer.disconnect();
      await producer.disconnect();
      await admin.disconnect();
    }
  });
}

for (const m of MECHANISMS) {
  test(`@platformatic/kafka ${over(m)}: create a topic, produce, consume in a group`, { skip: skipNoOpenssl, timeout: 60_000 }, async () => {
    const { Producer, Consumer, Admin, stringSerializers, stringDeserializers } = await import('@platformatic/kafka');
    const ca = readFileSync(certs.caCert, 'utf8');
    const common = m === 'mTLS'
      ? { bootstrapBrokers: [mtlsBootstrap], tls: { ca, cert: readFileSync(certs.clientCert, 'utf8'), key: readFileSync(certs.clientKey, 'utf8') } }
      : { bootstrapBrokers: [saslBootstrap], tls: { ca }, sasl: { mechanism: m, ...CREDENTIALS[m] } };
    const topic = topicFor('platformatic', m);
    const admin = new Admin({ clientId: 'sasl-plat-admin', ...common });
    const producer = new Producer({ clientId: 'sasl-plat', serializers: stringSerializers, acks: -1, idempotent: false, ...common });
    const consumer = new Consumer({ clientId: 'sasl-plat-consumer', groupId: `plat-${m}`, deserializers: stringDeserializers, ...common });
    try {
      await admin.createTopics({ topics: [topic], partitions: 2, replicas: 1 });
      await producer.send({ messages: expected.map((value, i) => ({ topic, key: `k${i}`, value })) });
      const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: true, sessionTimeout: 10_000, heartbeatInterval: 500 });
      const got: string[] = [];
      await within(30_000, 'platformatic consumes every record', (async () => {
        for await (const message of stream) {
          got.push(message.value as string);
          if (got.length === COUNT) break;
        }
      })());
      assert.deepEqual(sorted(got), expected);
    } finally {
      await consumer.close(true);
      await producer.close();
      await admin.close();
    }
  });
}

// @confluentinc/kafka-javascript is optional locally (a native addon): skipped when absent.
const CKJS = '@confluentinc/kafka-javascript';
function loadCkjs(): { ckjs: any; skip: string | false } {
  try {
    return { ckjs: createRequire(import.meta.url)(CKJS), skip: false };
  } catch (err) {
    if (process.env.CI) throw new Error(`${CKJS} is missing in CI: ${(err as Error).message}`);
    return { ckjs: null, skip: `${CKJS} is not installed (copy node_modules/@confluentinc, bindings, file-uri-to-path from /work/main)` };
  }
}
const { ckjs, skip: skipCkjs } = loadCkjs();

for (const m of MECHANISMS) {
  test(`@confluentinc/kafka-javascript ${over(m)}: create a topic, produce, consume in a group`, { skip: skipNoOpenssl || skipCkjs, timeout: 60_000 }, async () => {
    const kafka = new ckjs.KafkaJS.Kafka(m === 'mTLS'
      ? {
        kafkaJS: { clientId: 'sasl-ckjs', brokers: [mtlsBootstrap], ssl: true, logLevel: 0 },
        'ssl.ca.location': certs.caCert, 'ssl.certificate.location': certs.clientCert, 'ssl.key.location': certs.clientKey,
      }
      : {
        kafkaJS: { clientId: 'sasl-ckjs', brokers: [saslBootstrap], ssl: true, sasl: { mechanism: m.toLowerCase(), ...CREDENTIALS[m] }, logLevel: 0 },
        'ssl.ca.location': certs.caCert,
      });
    const topic = topicFor('ckjs', m);
    const admin = kafka.admin();
    const producer = kafka.producer();
    const consumer = kafka.consumer({ kafkaJS: { groupId: `ckjs-${m}`, fromBeginning: true } });
    try {
      await within(15_000, 'admin connect', admin.connect());
      await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] });
      await within(15_000, 'producer connect', producer.connect());
      await producer.send({ topic, messages: expected.map((value, i) => ({ key: `k${i}`, value })) });
      const got: string[] = [];
      let done!: () => void;
      const all = new Promise<void>((r) => { done = r; });
      await within(15_000, 'consumer connect', consumer.connect());
      await consumer.subscribe({ topics: [topic] });
      await consumer.run({ eachMessage: async ({ message }: { message: { value: Buffer } }) => { got.push(message.value.toString()); if (got.length === COUNT) done(); } });
      await within(40_000, 'ckjs consumes every record', all);
      assert.deepEqual(sorted(got), expected);
    } finally {
      await Promise.allSettled([consumer.disconnect(), producer.disconnect(), admin.disconnect()]);
    }
  });
}

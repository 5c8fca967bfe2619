// TLS listeners with real clients: kcat (librdkafka), confluent-kafka-python, kafka-python and
// kafkajs produce and consume over SSL next to a PLAINTEXT listener; mTLS maps the client
// certificate to a principal; plaintext, garbage and untrusted certificates are refused while the
// broker keeps serving; a new keystore is picked up without a restart; a cluster whose
// inter-broker and controller listeners are SSL replicates.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { runProcess, tempDataDir } from '../broker/process-helpers.js';
import { startCluster, startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { writeDevCerts, type DevCerts } from '../../src/security/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { plaintextAndSsl, pkcs12Stores } from './tls-config.js';

const hasKcat = spawnSync('kcat', ['-V']).status === 0;
const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
const PYTHON = '/usr/bin/python3'; // Debian's python3-kafka and python3-confluent-kafka are seen by the system python
const hasPy = (mod: string) => spawnSync(PYTHON, ['-c', `import ${mod}`]).status === 0;
if (process.env.CI && (!hasKcat || !hasOpenssl)) throw new Error('kcat and openssl are needed in CI');

let certs: DevCerts;
let rogue: DevCerts; // a second CA nobody trusts
before(() => {
  if (!hasOpenssl) return;
  const dir = mkdtempSync(join(tmpdir(), 'logline-tls-'));
  certs = writeDevCerts(join(dir, 'good'), { clientName: 'alice' });
  rogue = writeDevCerts(join(dir, 'rogue'), { clientName: 'mallory' });
});

interface Broker { server: ServerHandle; plain: string; ssl: string; logs: string[] }

async function broker(extra: Record<string, string> = {}): Promise<Broker> {
  const logs: string[] = [];
  const log = (m: string) => { logs.push(m); };
  const config = parseBrokerConfig({
    ...plaintextAndSsl(certs),
    'num.partitions': '1',
    ...extra,
  });
  const server = await startServer({ config, dataDir: tempDataDir(), logger: { info: log, warn: log, error: log } });
  const port = (name: string) => server.listeners.find((l) => l.name === name)!.port;
  return { server, plain: `127.0.0.1:${port('PLAINTEXT')}`, ssl: `127.0.0.1:${port('SSL')}`, logs };
}

const kcatSsl = (bootstrap: string, ...more: string[]) => ['-b', bootstrap, '-X', 'security.protocol=SSL', '-X', `ssl.ca.location=${certs.caCert}`, ...more];
const kcatMtls = (bootstrap: string, c: DevCerts = certs) => kcatSsl(bootstrap, '-X', `ssl.certificate.location=${c.clientCert}`, '-X', `ssl.key.location=${c.clientKey}`);

async function kcatRoundTrip(args: string[], topic: string, n: number): Promise<string[]> {
  const lines = Array.from({ length: n }, (_, i) => `k${i}:v${i}`).join('\n') + '\n';
  const p = await runProcess('kcat', ['-P', ...args, '-t', topic, '-K', ':', '-X', 'acks=all'], lines);
  assert.equal(p.code, 0, p.stderr);
  const c = await runProcess('kcat', ['-C', ...args, '-t', topic, '-o', 'beginning', '-c', String(n), '-e', '-q', '-f', '%k=%s@%o\\n']);
  assert.equal(c.code, 0, c.stderr);
  return c.stdout.trim().split('\n');
}

const skipNoKcat = !hasOpenssl ? 'openssl is not installed' : hasKcat ? false : 'kcat is not installed';

test('kcat produces and consumes over the SSL listener while the PLAINTEXT listener serves the same topic', { skip: skipNoKcat, timeout: 60_000 }, async () => {
  const b = await broker();
  try {
    const rows = await kcatRoundTrip(kcatSsl(b.ssl), 'tls-kcat', 200);
    assert.deepEqual(rows, Array.from({ length: 200 }, (_, i) => `k${i}=v${i}@${i}`));
    // The same records over PLAINTEXT, and metadata over SSL advertises the SSL listener.
    const c = await runProcess('kcat', ['-C', '-b', b.plain, '-t', 'tls-kcat', '-o', 'beginning', '-c', '200', '-e', '-q', '-f', '%s\\n']);
    assert.equal(c.stdout.trim().split('\n').length, 200);
    const meta = JSON.parse((await runProcess('kcat', ['-L', '-J', ...kcatSsl(b.ssl)])).stdout);
    assert.equal(meta.brokers[0].name, b.ssl);
  } finally {
    await b.server.close();
  }
});

// One script per Python client: produce n records over SSL, then read them back in a group.
const CONFLUENT_PY = `
import sys
from confluent_kafka import Producer, Consumer
bootstrap, topic, ca, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
ssl = {'bootstrap.servers': bootstrap, 'security.protocol': 'SSL', 'ssl.ca.location': ca}
p = Producer({**ssl, 'acks': 'all'})
for i in range(n): p.produce(topic, key=b'k%d' % i, value=b'v%d' % i)
assert p.flush(20) == 0
c = Consumer({**ssl, 'group.id': 'g-confluent', 'auto.offset.reset': 'earliest'})
c.subscribe([topic])
got = []
while len(got) < n:
    m = c.poll(20)
    assert m is not None, 'no record within 20 s'
    assert m.error() is None, m.error()
    got.append(m.value().decode())
c.close()
print(','.join(got))
`;
const KAFKA_PYTHON = `
import sys
from kafka import KafkaProducer, KafkaConsumer
bootstrap, topic, ca, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
p = KafkaProducer(bootstrap_servers=bootstrap, security_protocol='SSL', ssl_cafile=ca, acks='all')
for i in range(n): p.send(topic, key=b'k%d' % i, value=b'v%d' % i)
p.flush(20)
c = KafkaConsumer(topic, bootstrap_servers=bootstrap, security_protocol='SSL', ssl_cafile=ca, group_id='g-kafka-python', auto_offset_reset='earliest', consumer_timeout_ms=20000)
got = []
for m in c:
    got.append(m.value.decode())
    if len(got) == n: break
c.close()
print(','.join(got))
`;

// A transaction over SSL across a topic's partitions: its markers and its verification travel
// between brokers on the inter-broker listener, SSL too in the cluster test.
const CONFLUENT_TXN_PY = `
import sys
from confluent_kafka import Producer, Consumer, TopicPartition
bootstrap, topic, ca, partitions, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
ssl = {'bootstrap.servers': bootstrap, 'security.protocol': 'SSL', 'ssl.ca.location': ca}
p = Producer({**ssl, 'transactional.id': 'tls-txn'})
p.init_transactions(60)
p.begin_transaction()
for i in range(n): p.produce(topic, value=b'aborted%d' % i, partition=i % partitions)
p.abort_transaction(60)
p.begin_transaction()
for i in range(n): p.produce(topic, value=b'txn%d' % i, partition=i % partitions)
p.commit_transaction(60)
c = Consumer({**ssl, 'group.id': 'g-tls-txn', 'auto.offset.reset': 'earliest', 'isolation.level': 'read_committed', 'enable.partition.eof': True})
c.assign([TopicPartition(topic, i) for i in range(partitions)])
got, eof = [], set()
while len(eof) < partitions:
    m = c.poll(20)
    assert m is not None, 'no record within 20 s'
    if m.error():
        assert m.error().code() == -191, m.error()
        eof.add(m.partition())
        continue
    got.append(m.value().decode())
c.close()
print(','.join(v for v in got if v.startswith('txn') or v.startswith('aborted')))
`;

for (const [client, module, script] of [['confluent-kafka-python', 'confluent_kafka', CONFLUENT_PY], ['kafka-python', 'kafka', KAFKA_PYTHON]] as const) {
  const skip = !hasOpenssl ? 'openssl is not installed' : hasPy(module) ? false : `${client} is not installed for ${PYTHON}`;
  test(`${client} produces and consumes in a group over SSL`, { skip, timeout: 90_000 }, async () => {
    const b = await broker();
    try {
      const r = await runProcess(PYTHON, ['-c', script, b.ssl, `tls-${module}`, certs.caCert, '50'], null, 60_000);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(r.stdout.trim().split(','), Array.from({ length: 50 }, (_, i) => `v${i}`));
    } finally {
      await b.server.close();
    }
  });
}

test('kafkajs produces and consumes in a group over SSL (ssl option with the CA)', { skip: hasOpenssl ? false : 'openssl is not installed', timeout: 90_000 }, async () => {
  const { Kafka, logLevel } = await import('kafkajs');
  const b = await broker();
  const kafka = new Kafka({ clientId: 'tls-kafkajs', brokers: [b.ssl], ssl: { ca: [readFileSync(certs.caCert)] }, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  const producer = kafka.producer();
  const consumer = kafka.consumer({ groupId: 'g-kafkajs' });
  try {
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'tls-kafkajs', numPartitions: 2 }] });
    await producer.connect();
    await producer.send({ topic: 'tls-kafkajs', acks: -1, messages: Array.from({ length: 40 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) });
    await consumer.connect();
    await consumer.subscribe({ topic: 'tls-kafkajs', fromBeginning: true });
    const got = new Set<string>();
    await new Promise<void>((resolve) => {
      void consumer.run({ eachMessage: async ({ message }) => { got.add(message.value!.toString()); if (got.size === 40) resolve(); } });
    });
    assert.deepEqual([...got].sort(), Array.from({ length: 40 }, (_, i) => `v${i}`).sort());
  } finally {
    await consumer.disconnect();
    await producer.disconnect();
    await admin.disconnect();
    await b.server.close();
  }
});

const MTLS = {
  'listener.name.ssl.ssl.client.auth': 'required',
  // CN=alice,O=Logline dev → alice; anything else keeps its whole name.
  'ssl.principal.mapping.rules': 'RULE:^CN=([^,]+),O=Logline dev$/$1/L,DEFAULT',
};

test('fetch responses of megabytes over SSL (sent as several encrypted pieces) arrive intact and in order', { skip: skipNoKcat, timeout: 90_000 }, async () => {
  const b = await broker({ 'num.partitions': '4' });
  try {
    // 2,000 distinct 3 KiB values, 6 MB: each Fetch answer carries up to 1 MB per partition.
    const value = (i: number) => Array.from({ length: 3072 }, (_, j) => String.fromCharCode(97 + ((i * 7919 + j * 31 + (j >> 7)) % 26))).join('');
    const n = 2000;
    const lines = Array.from({ length: n }, (_, i) => `k${i}:${value(i)}`).join('\n') + '\n';
    const p = await runProcess('kcat', ['-P', '-b', b.plain, '-t', 'tls-big', '-K', ':', '-X', 'acks=all'], lines);
    assert.equal(p.code, 0, p.stderr);
    const c = await runProcess('kcat', ['-C', ...kcatSsl(b.ssl), '-t', 'tls-big', '-o', 'beginning', '-c', String(n), '-e', '-q', '-f', '%p %o %k %s\\n']);
    assert.equal(c.code, 0, c.stderr);
    const rows = c.stdout.trim().split('\n').map((l) => l.split(' '));
    assert.equal(rows.length, n);
    const seen = new Set<string>();
    const nextOffset = new Map<string, number>();
    for (const [partition, offset, key, v] of rows) {
      assert.equal(v, value(Number(key!.slice(1))), `value of ${key} at ${partition}/${offset}`);
      assert.equal(Number(offset), nextOffset.get(partition!) ?? 0, `offsets of partition ${partition} in order`);
      nextOffset.set(partition!, Number(offset) + 1);
      seen.add(key!);
    }
    assert.equal(seen.size, n);
  } finally {
    await b.server.close();
  }
});

test('max.connections counts TLS handshakes in progress: silent sockets hold every slot until they leave, and a failed handshake gives its slot back', { skip: skipNoKcat, timeout: 90_000 }, async () => {
  const b = await broker({ 'max.connections': '4' });
  try {
    const [host, port] = b.ssl.split(':');
    const open = () => new Promise<Socket>((resolve, reject) => {
      const s = connect({ host, port: Number(port) }, () => resolve(s));
      s.on('error', reject);
    });
    const closedWithin = (s: Socket, ms: number) => new Promise<boolean>((resolve) => {
      if (s.destroyed) { resolve(true); return; }
      const t = setTimeout(() => resolve(false), ms);
      s.on('close', () => { clearTimeout(t); resolve(true); });
      s.on('error', () => {});
    });
    // Four connections that never send a ClientHello take every slot.
    const silent = await Promise.all(Array.from({ length: 4 }, open));
    const extra = await open();
    assert.ok(await closedWithin(extra, 5000), 'a fifth connection during four handshakes must be refused');
    assert.ok(b.server.stats.connectionsRejected >= 1);
    const refusedMeta = await runProcess('kcat', ['-L', ...kcatSsl(b.ssl), '-m', '3']);
    assert.notEqual(refusedMeta.code, 0, 'kcat must not get in while the slots are held');
    assert.ok(silent.every((s) => !s.destroyed), 'the handshakes in progress are not closed for it');
    assert.equal(b.server.stats.tlsHandshakeFailures, 0, `a connection refused for its slot is no failed handshake: ${b.logs.filter((l) => l.includes('handshake')).join(' | ')}`);
    // Two leave; two fail their handshake with garbage: all four slots come back.
    silent[0]!.destroy();
    silent[1]!.destroy();
    const failing = silent.slice(2).map((s) => { const c = closedWithin(s, 5000); s.write(Buffer.alloc(64, 0x41)); return c; });
    assert.deepEqual(await Promise.all(failing), [true, true]);
    const rows = await kcatRoundTrip(kcatSsl(b.ssl), 'tls-slots', 20);
    assert.equal(rows.length, 20);
  } finally {
    await b.server.close();
  }
});

test('a TLS client that closes cleanly (close_notify, then FIN) gives its connection and its slot back at once', { skip: skipNoKcat, timeout: 90_000 }, async () => {
  const b = await broker({ 'max.connections.per.ip': '2' });
  try {
    // librdkafka ends its TLS sessions with close_notify: four runs in a row from one address
    // allowed two connections each need the slots of the runs before them back.
    for (let i = 0; i < 4; i++) {
      const meta = await runProcess('kcat', ['-L', ...kcatSsl(b.ssl), '-m', '10']);
      assert.equal(meta.code, 0, `run ${i}: ${meta.stderr}`);
    }
    await until('every connection closed', 20_000, () => b.server.stats.connectionsOpen === 0);
  } finally {
    await b.server.close();
  }
});

test('mTLS with ssl.client.auth=required: a trusted client certificate gets in and its DN is mapped to User:alice by a rule', { skip: skipNoKcat, timeout: 60_000 }, async () => {
  const b = await broker(MTLS);
  try {
    const rows = await kcatRoundTrip(kcatMtls(b.ssl), 'tls-mtls', 20);
    assert.equal(rows.length, 20);
    assert.ok(b.logs.some((l) => l.includes('authenticated as User:alice (CN=alice,O=Logline dev)')), b.logs.join('\n'));
  } finally {
    await b.server.close();
  }
});

/** Resolves with what the server sent before it closed the connection (or null after `ms`). */
function rawExchange(hostPort: string, bytes: Buffer, ms = 10_000): Promise<{ closed: boolean; received: number }> {
  const [host, port] = hostPort.split(':');
  return new Promise((resolve) => {
    let received = 0;
    const socket = connect({ host: host!, port: Number(port) }, () => socket.write(bytes));
    const timer = setTimeout(() => { socket.destroy(); resolve({ closed: false, received }); }, ms);
    socket.on('data', (d) => { received += d.length; });
    socket.on('error', () => {});
    socket.on('close', () => { clearTimeout(timer); resolve({ closed: true, received }); });
  });
}

/** A Kafka ApiVersions v0 request frame, as a plaintext client would open with. */
const API_VERSIONS_V0 = Buffer.from([0, 0, 0, 14, 0, 18, 0, 0, 0, 0, 0, 1, 0, 4, 0x74, 0x65, 0x73, 0x74]);

test('refusals: plaintext Kafka and garbage on the TLS listener, no or an untrusted client certificate under required; the broker keeps serving', { skip: skipNoKcat, timeout: 90_000 }, async () => {
  const b = await broker(MTLS);
  try {
    // A PLAINTEXT client speaks Kafka to the TLS port: no Kafka answer, the connection is closed.
    const plain = await rawExchange(b.ssl, API_VERSIONS_V0);
    assert.equal(plain.closed, true);
    // Bytes before the handshake that are not a ClientHello at all.
    const garbage = await rawExchange(b.ssl, Buffer.alloc(4096, 0x41));
    assert.equal(garbage.closed, true);
    // A certificate signed by a CA the broker does not trust, and no certificate at all.
    const untrusted = await runProcess('kcat', ['-L', ...kcatMtls(b.ssl, rogue), '-m', '5']);
    assert.notEqual(untrusted.code, 0);
    const noCert = await runProcess('kcat', ['-L', ...kcatSsl(b.ssl), '-m', '5']);
    assert.notEqual(noCert.code, 0);
    const tlsNoCert = await new Promise<string>((resolve) => {
      const [host, port] = b.ssl.split(':');
      const s = connectTls({ host: host!, port: Number(port), ca: readFileSync(certs.caCert), servername: 'localhost' }, () => s.write(API_VERSIONS_V0));
      s.on('data', () => resolve('answered'));
      s.on('error', (e) => resolve(`error ${e.message}`));
      s.on('close', () => resolve('closed'));
    });
    assert.notEqual(tlsNoCert, 'answered');
    assert.ok(b.server.stats.tlsHandshakeFailures >= 3, `handshake failures: ${b.server.stats.tlsHandshakeFailures}`);
    assert.equal(b.logs.some((l) => l.includes('User:mallory')), false);
    // Everyone else is still served, on both listeners.
    assert.equal((await kcatRoundTrip(kcatMtls(b.ssl), 'after-refusals', 10)).length, 10);
    const list = await runProcess('kcat', ['-L', '-b', b.plain, '-J']);
    assert.ok(JSON.parse(list.stdout).topics.some((t: { topic: string }) => t.topic === 'after-refusals'));
  } finally {
    await b.server.close();
  }
});

async function until(what: string, timeoutMs: number, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('IncrementalAlterConfigs of listener.name.ssl.ssl.keystore.location loads a new PKCS12 keystore: new connections get the new certificate, no restart', { skip: skipNoKcat, timeout: 90_000 }, async () => {
  const b = await broker();
  const client = new ClusterClient({ bootstrap: b.plain });
  try {
    const onlyOld = (ca: string) => runProcess('kcat', ['-L', '-b', b.ssl, '-X', 'security.protocol=SSL', '-X', `ssl.ca.location=${ca}`, '-m', '5']);
    assert.equal((await onlyOld(certs.caCert)).code, 0);
    assert.notEqual((await onlyOld(rogue.caCert)).code, 0);
    const conn = await client.broker(1);
    const alter = await conn.send(ApiKey.IncrementalAlterConfigs, 1, {
      resources: [{ resourceType: 4, resourceName: '1', configs: [
        { name: 'listener.name.ssl.ssl.keystore.type', configOperation: 0, value: 'PKCS12' },
        { name: 'listener.name.ssl.ssl.keystore.location', configOperation: 0, value: rogue.brokerKeystoreP12 },
        { name: 'listener.name.ssl.ssl.keystore.password', configOperation: 0, value: rogue.devPassword },
      ] }], validateOnly: false,
    });
    assert.equal(alter.responses[0].errorCode, 0, alter.responses[0].errorMessage);
    await until('the keystore reload', 20_000, () => b.logs.some((l) => l.includes('listener SSL: TLS keystore and truststore reloaded')));
    // The broker now presents the certificate the second CA signed.
    const afterNew = await onlyOld(rogue.caCert);
    assert.equal(afterNew.code, 0, afterNew.stderr);
    assert.notEqual((await onlyOld(certs.caCert)).code, 0);
  } finally {
    client.close();
    await b.server.close();
  }
});

test('a keystore file replaced in place is loaded when its location is set again to the same path (as Kafka does), no restart', { skip: skipNoKcat, timeout: 90_000 }, async () => {
  const live = join(mkdtempSync(join(tmpdir(), 'logline-ks-')), 'broker-live.pem');
  copyFileSync(join(certs.dir, 'broker.pem'), live);
  const b = await broker({ 'listener.name.ssl.ssl.keystore.location': live });
  const client = new ClusterClient({ bootstrap: b.plain });
  try {
    const trusting = (ca: string) => runProcess('kcat', ['-L', '-b', b.ssl, '-X', 'security.protocol=SSL', '-X', `ssl.ca.location=${ca}`, '-m', '5']);
    assert.equal((await trusting(certs.caCert)).code, 0);
    // The operator replaces the file (a renewed certificate, here one the second CA signed).
    copyFileSync(join(rogue.dir, 'broker.pem'), live);
    assert.equal((await trusting(certs.caCert)).code, 0, 'nothing reloads by itself');
    const conn = await client.broker(1);
    const alter = await conn.send(ApiKey.IncrementalAlterConfigs, 1, {
      resources: [{ resourceType: 4, resourceName: '1', configs: [{ name: 'listener.name.ssl.ssl.keystore.location', configOperation: 0, value: live }] }],
      validateOnly: false,
    });
    assert.equal(alter.responses[0].errorCode, 0, alter.responses[0].errorMessage);
    await until('the keystore reload', 20_000, () => b.logs.some((l) => l.includes('listener SSL: TLS keystore and truststore reloaded')));
    const renewed = await trusting(rogue.caCert);
    assert.equal(renewed.code, 0, renewed.stderr);
    assert.notEqual((await trusting(certs.caCert)).code, 0);
  } finally {
    client.close();
    await b.server.close();
  }
});

test('a 3-node cluster whose client, inter-broker and controller listeners are all SSL (controller with mTLS) replicates an RF 3 topic', { skip: skipNoKcat, timeout: 180_000 }, async () => {
  const cluster = await startCluster({
    nodes: 3,
    config: {
      // Listener names stay PLAINTEXT and CONTROLLER; the map makes both speak SSL, as Kafka allows.
      'listener.security.protocol.map': 'CONTROLLER:SSL,PLAINTEXT:SSL',
      ...pkcs12Stores(certs),
      'listener.name.controller.ssl.client.auth': 'required',
    },
  });
  const client = new ClusterClient({ bootstrap: cluster.bootstrap, tls: { ca: readFileSync(certs.caCert) } });
  try {
    const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: 'tls-rf3', numPartitions: 2, replicationFactor: 3, assignments: [],
      configs: [{ name: 'min.insync.replicas', value: '3' }] }], timeoutMs: 10_000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, 0, created.topics[0].errorMessage);
    const bootstrap = cluster.bootstrap.split(',')[0]!;
    // acks=all with min.insync.replicas=3: every write is on all three replicas, copied over SSL.
    const rows = await kcatRoundTrip(kcatSsl(bootstrap, '-X', 'message.timeout.ms=60000'), 'tls-rf3', 100);
    assert.equal(rows.length, 100);
    const meta = JSON.parse((await runProcess('kcat', ['-L', '-J', ...kcatSsl(bootstrap), '-t', 'tls-rf3'])).stdout);
    for (const p of meta.topics[0].partitions) assert.equal(p.isrs.length, 3, JSON.stringify(p));
    assert.equal(meta.brokers.length, 3);
    if (hasPy('confluent_kafka')) {
      // An aborted and a committed transaction over both partitions: read_committed sees the committed one only.
      const txn = await runProcess(PYTHON, ['-c', CONFLUENT_TXN_PY, bootstrap, 'tls-rf3', certs.caCert, '2', '20'], null, 120_000);
      assert.equal(txn.code, 0, txn.stderr);
      assert.deepEqual(txn.stdout.trim().split(',').sort(), Array.from({ length: 20 }, (_, i) => `txn${i}`).sort());
    }
    // The controller listener really is TLS with client certificates: plaintext Kafka gets no
    // answer, and a TLS client without a certificate is refused.
    const node = cluster.nodes[0]!;
    const controller = `${node.host}:${node.controllerPort}`;
    assert.equal((await rawExchange(controller, API_VERSIONS_V0)).closed, true);
    const noCert = await runProcess('kcat', ['-L', ...kcatSsl(controller), '-m', '5']);
    assert.notEqual(noCert.code, 0);
  } finally {
    client.close();
    await cluster.close();
  }
});

test('ssl.client.auth=requested: a client without a certificate gets in, one with a trusted certificate is User:alice, an untrusted one is refused', { skip: skipNoKcat, timeout: 60_000 }, async () => {
  const b = await broker({ ...MTLS, 'listener.name.ssl.ssl.client.auth': 'requested' });
  try {
    assert.equal((await runProcess('kcat', ['-L', ...kcatSsl(b.ssl), '-m', '5'])).code, 0);
    assert.equal((await runProcess('kcat', ['-L', ...kcatMtls(b.ssl), '-m', '5'])).code, 0);
    assert.ok(b.logs.some((l) => l.includes('authenticated as User:alice')), b.logs.join('\n'));
    assert.notEqual((await runProcess('kcat', ['-L', ...kcatMtls(b.ssl, rogue), '-m', '5'])).code, 0);
    assert.ok(b.logs.some((l) => l.includes('offered an untrusted certificate')), b.logs.join('\n'));
  } finally {
    await b.server.close();
  }
});

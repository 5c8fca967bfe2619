// A consumer whose fetch.max.bytes holds one record but not two reads every record (KIP-74): a
// topic with 3 partitions holds nine 900 KiB records, three in each, and librdkafka (through
// confluent-kafka-python and @confluentinc/kafka-javascript), kafkajs and kafka-python read them
// with fetch.max.bytes 1,000,000 and max.partition.fetch.bytes 20,000,000. librdkafka refuses an
// answer larger than receive.message.max.bytes (1,000,512 here) and asks again: a broker that added
// a second 900 KiB batch from the next partition kept it from ever getting past the first record.
// Every Fetch answer the broker sends these clients is checked against the request's limits.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import { Kafka, logLevel } from 'kafkajs';
import { runProcess, within } from './process-helpers.js';
import { FetchLimitChecker } from './fetch-limits.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { plaintextAndSsl } from '../security/tls-config.js';
import { writeDevCerts, type DevCerts } from '../../src/security/index.js';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { buildRecordBatch } from '../../src/records/index.js';

const PYTHON = '/usr/bin/python3';
const SCRIPT = 'test/broker/python/small_fetch_reader.py';
const TOPIC = 'large-records';
const PARTITIONS = 3;
const PER_PARTITION = 3;
const VALUE_BYTES = 900 * 1024;
const RECORDS_TOTAL = PARTITIONS * PER_PARTITION;
const CONSUMER_LIMITS = { fetchMaxBytes: 1_000_000, receiveMessageMaxBytes: 1_000_512, maxPartitionFetchBytes: 20_000_000 };

interface Row { p: number; o: number; n: number }

/** What each client was sent: Fetch answers seen and the limits any of them broke. */
class FetchWatch {
  private readonly byClient = new Map<string, { fetches: number; withData: number; violations: string[] }>();
  private readonly checker = new FetchLimitChecker();

  constructor(server: ServerHandle) {
    server.router.observe(ApiKey.Fetch, (header, request: any, response: any) => {
      const id = header.clientId ?? '';
      const seen = this.byClient.get(id) ?? { fetches: 0, withData: 0, violations: [] };
      this.byClient.set(id, seen);
      seen.fetches++;
      if (response.responses.some((t: any) => t.partitions.some((p: any) => (p.records?.length ?? 0) > 0))) seen.withData++;
      seen.violations.push(...this.checker.check(id, request, response));
    });
  }

  check(clientId: string): void {
    const seen = this.byClient.get(clientId);
    assert.ok(seen !== undefined && seen.withData > 0, `no Fetch with records was answered to ${clientId}`);
    assert.deepEqual(seen.violations, [], `Fetch answers to ${clientId} within the request's limits`);
  }
}

function checkRows(rows: Row[]): void {
  const got = rows.map((r) => `${r.p}/${r.o}`).sort();
  const want = [...Array(RECORDS_TOTAL).keys()].map((i) => `${Math.floor(i / PER_PARTITION)}/${i % PER_PARTITION}`).sort();
  assert.deepEqual(got, want, 'every record once');
  for (const r of rows) assert.equal(r.n, VALUE_BYTES, `value size of ${r.p}/${r.o}`);
}

/** With `certs`, clients are served on an SSL listener (where answers leave in encrypted pieces). */
async function withBroker(body: (bootstrap: string, watch: FetchWatch) => Promise<void>, certs?: DevCerts): Promise<void> {
  const server = await startServer({ config: parseBrokerConfig(certs ? plaintextAndSsl(certs) : { 'node.id': '1', 'listeners': 'PLAINTEXT://127.0.0.1:0' }) });
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
  const bootstrap = `127.0.0.1:${server.listeners[certs ? 1 : 0]!.port}`;
  try {
    const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, 0);
    for (let p = 0; p < PARTITIONS; p++) {
      const conn = await client.leaderFor(TOPIC, p);
      for (let i = 0; i < PER_PARTITION; i++) {
        const records = await buildRecordBatch({ records: [{ key: Buffer.from(`k${p}-${i}`), value: Buffer.alloc(VALUE_BYTES, 48 + i) }] });
        const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: TOPIC, partitionData: [{ index: p, records }] }] });
        assert.equal(r.responses[0].partitionResponses[0].errorCode, 0);
      }
    }
    await body(bootstrap, new FetchWatch(server));
  } finally {
    client.close();
    await server.close();
  }
}

const hasModule = (m: string) => spawnSync(PYTHON, ['-c', `import ${m}`]).status === 0;
function pythonSkip(module: string, pkg: string): string | false {
  if (hasModule(module)) return false;
  if (process.env.CI) throw new Error(`${pkg} is missing in CI (apt-get install -y ${pkg})`);
  return `${pkg} is not installed (apt-get install -y ${pkg})`;
}

async function readWithPython(t: TestContext, client: 'confluent' | 'kafka-python', clientId: string, module: string, pkg: string, certs?: DevCerts): Promise<void> {
  const skip = pythonSkip(module, pkg);
  if (skip) {
    t.skip(skip);
    return;
  }
  await withBroker(async (bootstrap, watch) => {
    const r = await runProcess(PYTHON, [SCRIPT, client, bootstrap, TOPIC, String(PARTITIONS), String(RECORDS_TOTAL), certs?.caCert ?? ''], null, 90_000);
    assert.equal(r.code, 0, r.stderr);
    checkRows(JSON.parse(r.stdout).rows);
    watch.check(clientId);
  }, certs);
}

test('confluent-kafka-python with fetch.max.bytes below two records reads all nine 900 KiB records', async (t) => {
  await readWithPython(t, 'confluent', 'small-fetch-confluent', 'confluent_kafka', 'python3-confluent-kafka');
});

test('confluent-kafka-python over TLS with fetch.max.bytes below two records reads all nine 900 KiB records', async (t) => {
  if (spawnSync('openssl', ['version']).status !== 0) {
    t.skip('openssl is not installed (it makes the test certificates)');
    return;
  }
  const certs = writeDevCerts(join(mkdtempSync(join(tmpdir(), 'logline-small-fetch-')), 'certs'));
  try {
    await readWithPython(t, 'confluent', 'small-fetch-confluent', 'confluent_kafka', 'python3-confluent-kafka', certs);
  } finally {
    rmSync(dirname(certs.dir), { recursive: true, force: true });
  }
});

test('kafka-python with fetch_max_bytes below two records reads all nine 900 KiB records', async (t) => {
  await readWithPython(t, 'kafka-python', 'small-fetch-kafka-python', 'kafka', 'python3-kafka');
});

test('kafkajs with maxBytes below two records reads all nine 900 KiB records', async () => {
  await withBroker(async (bootstrap, watch) => {
    const kafka = new Kafka({ clientId: 'small-fetch-kafkajs', brokers: [bootstrap], logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: 'small-fetch-kafkajs', maxBytes: CONSUMER_LIMITS.fetchMaxBytes, maxBytesPerPartition: CONSUMER_LIMITS.maxPartitionFetchBytes });
    const rows: Row[] = [];
    try {
      await consumer.connect();
      await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
      let done!: () => void;
      const all = new Promise<void>((r) => { done = r; });
      await consumer.run({
        autoCommit: false,
        eachMessage: async ({ partition, message }) => {
          rows.push({ p: partition, o: Number(message.offset), n: message.value?.length ?? 0 });
          if (rows.length === RECORDS_TOTAL) done();
        },
      });
      await within(60_000, `kafkajs reading ${RECORDS_TOTAL} records (${rows.length} so far)`, all);
    } finally {
      await consumer.disconnect();
    }
    checkRows(rows);
    watch.check('small-fetch-kafkajs');
  });
});

interface CkjsConsumer {
  connect(): Promise<void>; disconnect(): Promise<void>;
  subscribe(s: { topics: string[] }): Promise<void>;
  run(c: { eachMessage: (p: { partition: number; message: { offset: string; value: Buffer | null } }) => Promise<void> }): Promise<void>;
}
interface Ckjs { KafkaJS: { Kafka: new (config: object) => { consumer(config: object): CkjsConsumer } } }
const CKJS = '@confluentinc/kafka-javascript';

function loadCkjs(): Ckjs | string {
  try {
    return createRequire(import.meta.url)(CKJS) as Ckjs;
  } catch (err) {
    if (process.env.CI) throw new Error(`${CKJS} is missing in CI: ${(err as Error).message}`);
    return `${CKJS} is not installed (CKJS_LINKING=dynamic npm install --no-save ${CKJS}@1.10.1)`;
  }
}

test('@confluentinc/kafka-javascript with fetch.max.bytes below two records reads all nine 900 KiB records', async (t) => {
  const ckjs = loadCkjs();
  if (typeof ckjs === 'string') {
    t.skip(ckjs);
    return;
  }
  await withBroker(async (bootstrap, watch) => {
    const kafka = new ckjs.KafkaJS.Kafka({ kafkaJS: { clientId: 'small-fetch-ckjs', brokers: [bootstrap], logLevel: 0 } });
    const consumer = kafka.consumer({
      kafkaJS: { groupId: 'small-fetch-ckjs', fromBeginning: true, autoCommit: false },
      'fetch.max.bytes': CONSUMER_LIMITS.fetchMaxBytes, 'receive.message.max.bytes': CONSUMER_LIMITS.receiveMessageMaxBytes,
      'max.partition.fetch.bytes': CONSUMER_LIMITS.maxPartitionFetchBytes,
    });
    const rows: Row[] = [];
    try {
      await within(10_000, 'ckjs connect', consumer.connect());
      await consumer.subscribe({ topics: [TOPIC] });
      let done!: () => void;
      const all = new Promise<void>((r) => { done = r; });
      await consumer.run({
        eachMessage: async ({ partition, message }) => {
          rows.push({ p: partition, o: Number(message.offset), n: message.value?.length ?? 0 });
          if (rows.length === RECORDS_TOTAL) done();
        },
      });
      await within(60_000, `ckjs reading ${RECORDS_TOTAL} records (${rows.length} so far)`, all);
    } finally {
      await within(10_000, 'ckjs disconnect', consumer.disconnect()).catch(() => {});
    }
    checkRows(rows);
    watch.check('small-fetch-ckjs');
  });
});

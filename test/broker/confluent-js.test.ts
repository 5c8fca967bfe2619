// @confluentinc/kafka-javascript (librdkafka 2.15 behind its KafkaJS-compatible API) against the
// broker: admin create, list, fetch offsets and delete of topics; 10,000 keyed records with a header
// over every codec the build supports, consumed back through a group with every key, value, header,
// timestamp, partition and offset checked; and a consumer parked in a long poll woken by a produce.
//
// The package is not a dependency: it builds librdkafka from source at install time (~2.5 min), so
// .ci/run installs it with `npm install --no-save` after `npm ci`. Linked statically (its default) it
// downloads zstd and friends from GitHub; linked dynamically it uses the system's libraries, and
// zstd is then only there if libzstd-dev was installed before the build.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { tempDataDir, within } from './process-helpers.js';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { ClusterClient, partitionForKey } from '../../src/client/index.js';
import { ApiKey, decodeResponse } from '../../src/protocol/index.js';

const PACKAGE = '@confluentinc/kafka-javascript';
const INSTALL = `apt-get install -y libzstd-dev && CKJS_LINKING=dynamic npm install --no-save ${PACKAGE}@1.10.1`;
const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
const RECORDS_TOTAL = 10_000;
const KEYS_COUNT = 97;
const PARTITIONS_COUNT = 6;
// The consumer's Fetch may wait 10 s (maxWaitTimeInMs): a record delivered within 2 s of its ack
// ended the wait, while a broker that let the timer run would deliver it seconds later.
const LONG_POLL_MAX_WAIT_MS = 10_000;
const LONG_POLL_LATENCY_MS_MAX = 2000;

// The few parts of the client's KafkaJS-compatible API used here, typed locally so that the test
// compiles on a machine without the package.
interface Ckjs {
  librdkafkaVersion: string;
  features: string[];
  KafkaJS: { Kafka: new (config: object) => CkjsKafka };
}
interface CkjsClient { connect(): Promise<void>; disconnect(): Promise<void> }
interface CkjsKafka {
  admin(config?: object): CkjsAdmin;
  producer(config?: object): CkjsProducer;
  consumer(config: object): CkjsConsumer;
}
interface CkjsAdmin extends CkjsClient {
  createTopics(options: { topics: { topic: string; numPartitions: number; replicationFactor: number }[]; timeout?: number }): Promise<boolean>;
  listTopics(options?: { timeout?: number }): Promise<string[]>;
  fetchTopicMetadata(options: { topics: string[]; timeout?: number }): Promise<{ name: string; partitions: { partitionId: number; leader: number }[] }[]>;
  fetchTopicOffsets(topic: string): Promise<{ partition: number; offset: string; high: string; low: string }[]>;
  deleteTopics(options: { topics: string[]; timeout?: number }): Promise<void>;
}
interface CkjsMessage { key: string; value: string; headers: Record<string, string> }
interface CkjsProducer extends CkjsClient {
  send(record: { topic: string; messages: CkjsMessage[] }): Promise<{ partition: number; errorCode: number; offset?: string }[]>;
}
interface CkjsReceived { key: Buffer | null; value: Buffer | null; timestamp: string; offset: string; headers?: Record<string, Buffer | Buffer[] | undefined> }
interface CkjsConsumer extends CkjsClient {
  subscribe(subscription: { topics: string[] }): Promise<void>;
  run(config: { eachMessage: (payload: { topic: string; partition: number; message: CkjsReceived }) => Promise<void> }): Promise<void>;
  assignment(): { topic: string; partition: number }[];
}

function loadClient(): { ckjs: Ckjs | null; skip: string | false } {
  try {
    return { ckjs: createRequire(import.meta.url)(PACKAGE) as Ckjs, skip: false };
  } catch (err) {
    // In CI every client must be there: a missing one fails instead of skipping.
    if (process.env.CI) throw new Error(`${PACKAGE} is missing in CI (${INSTALL}): ${(err as Error).message}`);
    // Installed but built for another Node (its addon is not Node-API): say so, not "not installed".
    const missing = (err as { code?: string }).code === 'MODULE_NOT_FOUND' && (err as Error).message.includes(`'${PACKAGE}'`);
    return { ckjs: null, skip: missing ? `${PACKAGE} is not installed (${INSTALL})` : `${PACKAGE} does not load on Node ${process.version} (${(err as Error).message.replace(/\s+/g, ' ').slice(0, 300)}); rebuild it with this Node: npm_config_build_from_source=true npm rebuild ${PACKAGE}` };
  }
}
const { ckjs, skip } = loadClient();

function supportedCodecs(client: Ckjs): string[] {
  const codecs = CODECS.filter((c) => c === 'none' || client.features.includes(c));
  // A build without libzstd-dev silently drops zstd; CI installs it, so there it must be present.
  if (process.env.CI) assert.deepEqual(codecs, [...CODECS], `librdkafka built without some codecs (features: ${client.features.join(',')})`);
  return codecs;
}

function kafkaFor(client: Ckjs, server: ServerHandle): CkjsKafka {
  const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
  return new client.KafkaJS.Kafka({ kafkaJS: { clientId: 'ckjs-test', brokers: [bootstrap], logLevel: 0 } });
}

/** Disconnects every client that connected, even when the test failed half-way. */
async function disconnectAll(clients: CkjsClient[]): Promise<void> {
  await Promise.allSettled(clients.map((c) => within(10_000, 'disconnect', c.disconnect())));
}

interface Row { partition: number; offset: number; key: string; value: string; headers: Record<string, string[]>; timestampMs: number }

function rowOf(partition: number, m: CkjsReceived): Row {
  const headers: Record<string, string[]> = {};
  for (const [name, v] of Object.entries(m.headers ?? {})) {
    if (v !== undefined) headers[name] = (Array.isArray(v) ? v : [v]).map((b) => b.toString());
  }
  return { partition, offset: Number(m.offset), key: m.key!.toString(), value: m.value!.toString(), headers, timestampMs: Number(m.timestamp) };
}

/** What a user would check: each record once, intact, where its key says, in order, offsets from 0. */
function checkRoundTrip(rows: Row[], codecs: string[], perCodec: number, sentFromMs: number, sentToMs: number): void {
  assert.equal(rows.length, perCodec * codecs.length, `${rows.length} records came back`);
  assert.equal(new Set(rows.map((r) => r.value)).size, rows.length, 'no duplicates');
  const partitionOfKey = new Map<string, number>();
  const offsets = new Map<number, number[]>();
  const lastIndex = new Map<string, number>(); // codec@partition → index of the last record seen
  for (const r of rows) {
    const [codec, index] = r.value.split('-') as [string, string];
    assert.ok(codecs.includes(codec), `codec of ${r.value}`);
    assert.equal(r.key, `key-${Number(index) % KEYS_COUNT}`, `key of ${r.value}`);
    assert.deepEqual(r.headers, { codec: [codec] }, `headers of ${r.value}`);
    assert.ok(r.timestampMs >= sentFromMs - 1000 && r.timestampMs <= sentToMs + 1000, `timestamp ${r.timestampMs} of ${r.value} outside [${sentFromMs}, ${sentToMs}]`);
    assert.equal(r.partition, partitionForKey(Buffer.from(r.key), PARTITIONS_COUNT), `${r.key} in partition ${r.partition} (murmur2)`);
    if (partitionOfKey.has(r.key)) assert.equal(partitionOfKey.get(r.key), r.partition, `${r.key} in two partitions`);
    partitionOfKey.set(r.key, r.partition);
    offsets.set(r.partition, [...(offsets.get(r.partition) ?? []), r.offset]);
    const slot = `${codec}@${r.partition}`;
    assert.ok((lastIndex.get(slot) ?? -1) < Number(index), `${r.value} out of send order in partition ${r.partition}`);
    lastIndex.set(slot, Number(index));
  }
  for (const [partition, list] of offsets) {
    list.sort((a, b) => a - b);
    assert.deepEqual(list, list.map((_, i) => i), `offsets of partition ${partition} are contiguous from 0`);
  }
}

async function produceWithEachCodec(kafka: CkjsKafka, clients: CkjsClient[], topic: string, codecs: string[], perCodec: number): Promise<void> {
  for (const codec of codecs) {
    const producer = kafka.producer({ kafkaJS: { compression: codec, acks: -1 } });
    clients.push(producer);
    await within(10_000, `${codec} producer connect`, producer.connect());
    const messages = Array.from({ length: perCodec }, (_, i) => ({ key: `key-${i % KEYS_COUNT}`, value: `${codec}-${i}`, headers: { codec } }));
    const acks = await within(30_000, `${codec} send`, producer.send({ topic, messages }));
    assert.equal(acks.filter((a) => a.errorCode === 0).length, acks.length, `${codec}: every partition acknowledged`);
    await within(10_000, `${codec} producer disconnect`, producer.disconnect());
  }
}

async function consumeAll(kafka: CkjsKafka, clients: CkjsClient[], topic: string, count: number): Promise<Row[]> {
  const consumer = kafka.consumer({ kafkaJS: { groupId: 'ckjs-roundtrip', fromBeginning: true, autoCommit: true } });
  clients.push(consumer);
  await within(10_000, 'consumer connect', consumer.connect());
  await within(10_000, 'subscribe', consumer.subscribe({ topics: [topic] }));
  const rows: Row[] = [];
  let done!: () => void;
  const all = new Promise<void>((resolve) => { done = resolve; });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      rows.push(rowOf(partition, message));
      if (rows.length === count) done();
    },
  });
  await within(60_000, `consume ${count} (got ${rows.length} so far)`, all).catch((err: Error) => {
    throw new Error(`${err.message}; ${rows.length} received`);
  });
  // Anything after the count would be a duplicate; give it a moment to show up.
  await new Promise((r) => setTimeout(r, 300));
  return rows;
}

test('confluent-kafka-javascript: admin create/list/offsets/delete, 10,000 records over every codec, consumed back intact', { skip }, async (t: TestContext) => {
  const client = ckjs!;
  const codecs = supportedCodecs(client);
  t.diagnostic(`librdkafka ${client.librdkafkaVersion}, codecs ${codecs.join(',')}`);
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const produceVersions = new Set<number>();
  server.router.intercept(ApiKey.Produce, (header) => { produceVersions.add(header.requestApiVersion); return undefined; });
  const clients: CkjsClient[] = [];
  try {
    const kafka = kafkaFor(client, server);
    const admin = kafka.admin();
    clients.push(admin);
    await within(10_000, 'admin connect', admin.connect());
    const topic = 'ckjs-roundtrip';
    assert.equal(await within(10_000, 'createTopics', admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS_COUNT, replicationFactor: 1 }, { topic: 'ckjs-doomed', numPartitions: 1, replicationFactor: 1 }], timeout: 5000 })), true);
    assert.deepEqual((await within(10_000, 'listTopics', admin.listTopics())).filter((n) => n.startsWith('ckjs-')).sort(), ['ckjs-doomed', topic]);
    const [meta] = await within(10_000, 'fetchTopicMetadata', admin.fetchTopicMetadata({ topics: [topic] }));
    assert.deepEqual(meta!.partitions.map((p) => p.partitionId).sort(), [0, 1, 2, 3, 4, 5]);
    assert.ok(meta!.partitions.every((p) => p.leader === server.nodeId), 'this broker leads every partition');

    const perCodec = RECORDS_TOTAL / codecs.length;
    const sentFromMs = Date.now();
    await produceWithEachCodec(kafka, clients, topic, codecs, perCodec);
    const sentToMs = Date.now();
    t.diagnostic(`Produce versions used: ${[...produceVersions].sort().join(',')}`);
    if (codecs.includes('zstd')) assert.ok([...produceVersions].every((v) => v >= 7), 'zstd needs Produce v7 or later');

    const rows = await consumeAll(kafka, clients, topic, RECORDS_TOTAL);
    checkRoundTrip(rows, codecs, perCodec, sentFromMs, sentToMs);

    const offsets = await within(10_000, 'fetchTopicOffsets', admin.fetchTopicOffsets(topic));
    assert.equal(offsets.length, PARTITIONS_COUNT);
    for (const o of offsets) {
      assert.equal(o.low, '0', `log start of partition ${o.partition}`);
      assert.equal(Number(o.high), rows.filter((r) => r.partition === o.partition).length, `high watermark of partition ${o.partition}`);
    }

    await within(10_000, 'deleteTopics', admin.deleteTopics({ topics: ['ckjs-doomed'], timeout: 5000 }));
    assert.deepEqual((await within(10_000, 'listTopics', admin.listTopics())).filter((n) => n.startsWith('ckjs-')), [topic]);
  } finally {
    await disconnectAll(clients);
    await server.close();
  }
});

test('confluent-kafka-javascript: a consumer waiting in a long poll receives a record produced afterwards long before max_wait_ms', { skip }, async (t: TestContext) => {
  const client = ckjs!;
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  // Fetch arrivals, to show that the consumer really was parked in the broker when the record came.
  const fetches: { atMs: number; maxWaitMs: number }[] = [];
  server.router.intercept(ApiKey.Fetch, (_header, request) => {
    fetches.push({ atMs: performance.now(), maxWaitMs: (request as { maxWaitMs: number }).maxWaitMs });
    return undefined;
  });
  const clients: CkjsClient[] = [];
  try {
    const kafka = kafkaFor(client, server);
    const topic = 'ckjs-poll';
    const admin = kafka.admin();
    clients.push(admin);
    await within(10_000, 'admin connect', admin.connect());
    await within(10_000, 'createTopics', admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], timeout: 5000 }));
    // linger.ms=0 so the record leaves as soon as send() is called.
    const producer = kafka.producer({ kafkaJS: { acks: 1 }, 'linger.ms': 0 });
    clients.push(producer);
    await within(10_000, 'producer connect', producer.connect());
    const consumer = kafka.consumer({ kafkaJS: { groupId: 'ckjs-poll', fromBeginning: true, maxWaitTimeInMs: LONG_POLL_MAX_WAIT_MS } });
    clients.push(consumer);
    await within(10_000, 'consumer connect', consumer.connect());
    await within(10_000, 'subscribe', consumer.subscribe({ topics: [topic] }));

    const arrivals = new Map<string, number>(); // value → when eachMessage saw it
    const waiters = new Map<string, () => void>();
    await consumer.run({
      eachMessage: async ({ message }) => {
        const value = message.value!.toString();
        arrivals.set(value, performance.now());
        waiters.get(value)?.();
      },
    });
    const arrival = (value: string) => new Promise<void>((resolve) => { if (arrivals.has(value)) resolve(); else waiters.set(value, resolve); });

    // A first record proves the consumer has joined, been assigned the partition and caught up.
    await within(10_000, 'send warm-up', producer.send({ topic, messages: [{ key: 'k', value: 'warm-up', headers: {} }] }));
    await within(30_000, 'warm-up record', arrival('warm-up'));
    // Let the consumer settle into its next Fetch, which the broker holds for up to LONG_POLL_MAX_WAIT_MS.
    await new Promise((r) => setTimeout(r, 1000));

    const sentAtMs = performance.now();
    const [ack] = await within(10_000, 'send', producer.send({ topic, messages: [{ key: 'k', value: 'late', headers: {} }] }));
    const ackedAtMs = performance.now();
    assert.equal(ack!.errorCode, 0);
    await within(2 * LONG_POLL_MAX_WAIT_MS, 'late record', arrival('late'));
    const receivedAtMs = arrivals.get('late')!;

    const parked = fetches.filter((f) => f.atMs < sentAtMs).at(-1);
    assert.ok(parked, 'a Fetch was in the broker before the produce');
    assert.equal(parked.maxWaitMs, LONG_POLL_MAX_WAIT_MS);
    const parkedForMs = sentAtMs - parked.atMs;
    assert.ok(parkedForMs >= 500, `the newest Fetch before the produce had waited only ${parkedForMs.toFixed(0)} ms`);
    const latencyMs = receivedAtMs - ackedAtMs;
    t.diagnostic(`Fetch parked ${parkedForMs.toFixed(0)} ms; send→message ${(receivedAtMs - sentAtMs).toFixed(1)} ms, send→ack ${(ackedAtMs - sentAtMs).toFixed(1)} ms, ack→message ${latencyMs.toFixed(1)} ms`);
    assert.ok(latencyMs < LONG_POLL_LATENCY_MS_MAX, `delivered ${latencyMs.toFixed(1)} ms after the produce ack`);
  } finally {
    await disconnectAll(clients);
    await server.close();
  }
});

// Captured from librdkafka 2.15.1 (the admin client's listTopics): Metadata v12 for all topics, with
// the null topic array written as a 4-byte zero instead of a 1-byte varint (confluentinc/librdkafka#5049).
// Kafka ignores the 3 bytes this leaves after the body; a broker that rejects them drops the
// connection and the client reports "Broker transport failure".
const LIBRDKAFKA_ALL_TOPICS_METADATA_V12 = '0003000c00000004000772646b61666b610000000000010000';

test('librdkafka\'s all-topics Metadata v12 with a 4-byte null array is answered with every topic', async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
  const socket = connect(server.listeners[0]!.port, '127.0.0.1');
  try {
    const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: 'ckjs-listed', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, 0);
    const frame = Buffer.from(LIBRDKAFKA_ALL_TOPICS_METADATA_V12, 'hex');
    const size = Buffer.alloc(4);
    size.writeInt32BE(frame.length);
    const response = await within(5000, 'Metadata response', new Promise<Buffer>((resolve, reject) => {
      let got = Buffer.alloc(0);
      socket.on('data', (d: Buffer) => {
        got = Buffer.concat([got, d]);
        if (got.length >= 4 && got.length >= 4 + got.readInt32BE(0)) resolve(got.subarray(4, 4 + got.readInt32BE(0)));
      });
      socket.on('close', () => reject(new Error('the broker closed the connection')));
      socket.on('error', reject);
      socket.write(Buffer.concat([size, frame]));
    }));
    const { correlationId, body } = decodeResponse(ApiKey.Metadata, 12, response);
    assert.equal(correlationId, 4);
    const topics = body.topics as { name: string; partitions: unknown[] }[];
    assert.deepEqual(topics.map((t) => [t.name, t.partitions.length]), [['ckjs-listed', 2]]);
  } finally {
    socket.destroy();
    client.close();
    await server.close();
  }
});

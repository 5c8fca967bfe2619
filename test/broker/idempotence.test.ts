// Idempotent producers through a proxy that cuts the connection instead of delivering some
// Produce responses: the client never learns its batch was written and sends it again, and the
// broker must answer the retry with the original offset instead of appending it twice. Afterwards
// every record is in the log exactly once, in send order (kafkajs and librdkafka through kcat).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { spawnSync } from 'node:child_process';
import { Kafka, logLevel } from 'kafkajs';
import { startServer } from '../../src/node/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { Prng } from '../../src/util/index.js';
import { runProcess, tempDataDir } from './process-helpers.js';
import { consumeAll } from './log-reader.js';


/** Splits a byte stream into Kafka frames (4-byte size prefix). */
function framer(onFrame: (frame: Buffer) => void): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
      const size = pending.readInt32BE(0);
      onFrame(pending.subarray(0, 4 + size));
      pending = pending.subarray(4 + size);
    }
  };
}

/** A loopback proxy that drops the connection instead of forwarding a share of Produce responses. */
class CuttingProxy {
  readonly server: Server;
  cuts = 0;
  brokerPort = 0;
  private readonly sockets = new Set<Socket>();
  constructor(private readonly prng: Prng, private readonly cutShare: number, private readonly cutsMax: number) {
    this.server = createServer((client) => this.accept(client));
  }
  listen(): Promise<number> {
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', () => resolve((this.server.address() as { port: number }).port)));
  }
  private accept(client: Socket): void {
    const broker = connect(this.brokerPort, '127.0.0.1');
    for (const s of [client, broker]) { this.sockets.add(s); s.on('close', () => this.sockets.delete(s)); s.on('error', () => {}); }
    const apiKeyOf = new Map<number, number>();
    const cut = () => { client.destroy(); broker.destroy(); };
    client.on('data', framer((f) => { apiKeyOf.set(f.readInt32BE(8), f.readInt16BE(4)); broker.write(f); }));
    broker.on('data', framer((f) => {
      const correlationId = f.readInt32BE(4);
      const apiKey = apiKeyOf.get(correlationId);
      apiKeyOf.delete(correlationId);
      if (apiKey === ApiKey.Produce && this.cuts < this.cutsMax && this.prng.next() < this.cutShare) {
        this.cuts++;
        cut(); // the batch is written, but the producer never hears so
        return;
      }
      client.write(f);
    }));
    client.on('close', cut);
    broker.on('close', cut);
  }
  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

async function withProxiedBroker(fn: (proxyPort: number, direct: ClusterClient, proxy: CuttingProxy) => Promise<void>): Promise<void> {
  const proxy = new CuttingProxy(new Prng(9), 0.15, 25);
  const proxyPort = await proxy.listen();
  // The broker advertises the proxy, so clients keep coming back through it.
  const config = parseBrokerConfig({ 'node.id': '1', 'advertised.listeners': `PLAINTEXT://127.0.0.1:${proxyPort}` });
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], config, dataDir: tempDataDir() });
  proxy.brokerPort = server.listeners[0]!.port;
  const direct = new ClusterClient({ bootstrap: `127.0.0.1:${proxy.brokerPort}` });
  try {
    await fn(proxyPort, direct, proxy);
  } finally {
    direct.close();
    await proxy.close();
    await server.close();
  }
}

async function createTopic(client: ClusterClient, name: string): Promise<void> {
  const r = await client.admin(ApiKey.CreateTopics, { topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false }, 7);
  assert.equal(r.topics[0].errorCode, 0);
}

test('InitProducerId hands out distinct producer ids at epoch 0, from blocks recorded in the metadata log; a transactional id keeps its id and bumps its epoch', async () => {
  await withProxiedBroker(async (_port, direct) => {
    const conn = await direct.any();
    const ids = new Set<bigint>();
    for (let v = 0; v <= 5; v++) {
      const r = await conn.send(ApiKey.InitProducerId, v, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
      assert.equal(r.errorCode, 0, `v${v}`);
      assert.equal(r.producerEpoch, 0);
      ids.add(r.producerId);
    }
    assert.equal(ids.size, 6);
    const txn = await conn.send(ApiKey.InitProducerId, 4, { transactionalId: 'tx', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    assert.equal(txn.errorCode, 0);
    assert.ok(!ids.has(txn.producerId), 'a transactional id gets an id no idempotent producer has');
    const again = await conn.send(ApiKey.InitProducerId, 4, { transactionalId: 'tx', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    assert.deepEqual([again.errorCode, again.producerId, again.producerEpoch], [0, txn.producerId, txn.producerEpoch + 1]);
    const tooLong = await conn.send(ApiKey.InitProducerId, 4, { transactionalId: 'tx', transactionTimeoutMs: 3_600_000, producerId: -1n, producerEpoch: -1 });
    assert.equal(tooLong.errorCode, ErrorCode.INVALID_TRANSACTION_TIMEOUT, 'above transaction.max.timeout.ms');
  });
});

test('kafkajs idempotent producer: with Produce responses cut, every record is in the log exactly once and in order', { timeout: 120_000 }, async () => {
  await withProxiedBroker(async (proxyPort, direct, proxy) => {
    await createTopic(direct, 'idem-js');
    const kafka = new Kafka({ clientId: 'idem', brokers: [`127.0.0.1:${proxyPort}`], logLevel: logLevel.NOTHING, retry: { retries: 30, initialRetryTime: 50, maxRetryTime: 500 } });
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const sent: string[] = [];
    try {
      for (let i = 0; i < 150; i++) {
        const batch = Array.from({ length: 10 }, (_, j) => `js-${i * 10 + j}`);
        await producer.send({ topic: 'idem-js', acks: -1, messages: batch.map((value) => ({ partition: 0, value })) });
        sent.push(...batch);
      }
    } finally {
      await producer.disconnect();
    }
    assert.ok(proxy.cuts >= 5, `only ${proxy.cuts} responses were cut`);
    assert.deepEqual(await consumeAll(direct, 'idem-js', 0), sent, 'each record once, in send order');
  });
});

const PYTHON = '/usr/bin/python3'; // Debian's python3-confluent-kafka is seen by the system python
const hasConfluent = spawnSync(PYTHON, ['-c', 'import confluent_kafka']).status === 0;
if (!hasConfluent && process.env.CI) throw new Error('python3-confluent-kafka is missing in CI (apt-get install -y python3-confluent-kafka)');

// kcat gives up when its only broker is down, so librdkafka is driven from confluent-kafka-python.
const LIBRDKAFKA_PRODUCER = `
import sys, json
from confluent_kafka import Producer
p = Producer({'bootstrap.servers': sys.argv[1], 'enable.idempotence': True, 'linger.ms': 5, 'batch.num.messages': 50,
              'reconnect.backoff.ms': 10, 'retry.backoff.ms': 10, 'message.timeout.ms': 60000, 'error_cb': lambda e: None})
failed = []
def done(err, msg):
    if err is not None: failed.append(str(err))
for i in range(int(sys.argv[3])):
    p.produce(sys.argv[2], value=('rd-%d' % i).encode(), partition=0, on_delivery=done)
    p.poll(0)
left = p.flush(60)
print(json.dumps({'failed': failed[:5], 'nFailed': len(failed), 'left': left}))
`;

test('librdkafka (confluent-kafka-python, enable.idempotence=true): with Produce responses cut, every record is in the log exactly once and in order', { timeout: 120_000, skip: hasConfluent ? false : 'python3-confluent-kafka is not installed' }, async () => {
  await withProxiedBroker(async (proxyPort, direct, proxy) => {
    await createTopic(direct, 'idem-rd');
    const r = await runProcess(PYTHON, ['-c', LIBRDKAFKA_PRODUCER, `127.0.0.1:${proxyPort}`, 'idem-rd', '3000'], null, 90_000);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { failed: [], nFailed: 0, left: 0 }, 'every record delivered');
    assert.ok(proxy.cuts >= 5, `only ${proxy.cuts} responses were cut`);
    assert.deepEqual(await consumeAll(direct, 'idem-rd', 0), Array.from({ length: 3000 }, (_, i) => `rd-${i}`), 'each record once, in send order');
  });
});

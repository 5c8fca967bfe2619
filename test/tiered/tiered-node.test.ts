// Tiering on one broker, end to end, on the local directory backend and on S3 (s3rver as its own
// process): records produced past several 1 MiB segments are copied to the tier, local retention
// deletes the copied segments, and then kcat, confluent-kafka-python, kafka-python and kafkajs each
// read every offset from 0, in order, exactly once, with keys, headers and timestamps as written;
// read_committed across the tier boundary shows no aborted record; ListOffsets answers EARLIEST,
// EARLIEST_LOCAL and LATEST_TIERED.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, CompressionTypes } from 'kafkajs';
import { ApiKey } from '../../src/protocol/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { nodeMetrics } from '../../src/http/index.js';
import { runProcess, tempDataDir, until } from '../broker/process-helpers.js';
import { ACCESS_KEY, SECRET, BUCKET, startS3Server, stopS3Server, type RunningServer } from './s3-helpers.js';
import { S3ObjectStore, S3_PART_BYTES_MIN } from '../../src/tiered/index.js';

const PYTHON = '/usr/bin/python3';
const hasModule = (m: string) => spawnSync(PYTHON, ['-c', `import ${m}`]).status === 0;
const hasKcat = spawnSync('kcat', ['-V']).status === 0;
const missing = (what: string, ok: boolean): string | false => {
  if (ok) return false;
  if (process.env.CI) throw new Error(`${what} is missing in CI`);
  return `${what} is not installed`;
};

const RECORDS = 3600;
const VALUE_BYTES = 1000;
const TXN_ROUNDS = 12;
/** Recent timestamps: retention.ms (7 days) must not expire what the test reads. */
const BASE_TS = Date.now() - 3_600_000;

interface Row { o: number; k: string | null; v: string | null; ts: number; h: [string, string][] }
const expected = (i: number): Row => ({ o: i, k: `k${i % 97}`, v: `v${i}-`.padEnd(VALUE_BYTES, 'x'), ts: BASE_TS + i, h: [['h', `x${i}`]] });

async function listOffset(client: ClusterClient, topic: string, timestamp: bigint): Promise<number> {
  const conn = await client.leaderFor(topic, 0);
  const r = await conn.send(ApiKey.ListOffsets, 9, { replicaId: -1, isolationLevel: 0, topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp }] }] });
  const p = r.topics[0].partitions[0];
  assert.equal(p.errorCode, 0, `ListOffsets ${timestamp}`);
  return Number(p.offset);
}

function checkRows(rows: Row[], count: number, who: string): void {
  assert.equal(rows.length, count, `${who}: ${rows.length} of ${count} records`);
  for (let i = 0; i < count; i++) {
    const want = expected(i);
    const got = rows[i]!;
    if (got.o !== i || got.k !== want.k || got.v !== want.v || got.ts !== want.ts || JSON.stringify(got.h) !== JSON.stringify(want.h)) {
      assert.deepEqual(got, want, `${who}: record ${i}`);
    }
  }
}

function tieredSuite(backend: 'local' | 's3'): void {
  describe(`tiering on one broker (${backend === 'local' ? 'local directory' : 'S3'} backend)`, { timeout: 240_000 }, () => {
    let server: ServerHandle;
    let client: ClusterClient;
    let bootstrap: string;
    let s3: RunningServer | null = null;
    let remoteDir = '';
    let txnEnd = 0;

    before(async () => {
      const settings: Record<string, string> = {
        'node.id': '1', 'remote.log.storage.system.enable': 'true', 'remote.log.manager.task.interval.ms': '200', 'log.retention.check.interval.ms': '200',
        'rlmm.config.remote.log.metadata.topic.num.partitions': '3',
      };
      if (backend === 'local') {
        remoteDir = mkdtempSync(join(tmpdir(), 'logline-tier-'));
        Object.assign(settings, { 'remote.log.storage.manager.class.name': 'org.apache.kafka.server.log.remote.storage.LocalTieredStorage', 'rsm.config.dir': remoteDir });
      } else {
        s3 = await startS3Server();
        Object.assign(settings, {
          'remote.log.storage.manager.class.name': 'io.aiven.kafka.tieredstorage.RemoteStorageManager',
          'rsm.config.storage.backend.class': 'io.aiven.kafka.tieredstorage.storage.s3.S3Storage',
          'rsm.config.storage.s3.bucket.name': BUCKET, 'rsm.config.storage.s3.endpoint.url': `http://127.0.0.1:${s3.port}`,
          'rsm.config.storage.s3.path.style.access.enabled': 'true', 'rsm.config.storage.aws.access.key.id': ACCESS_KEY,
          'rsm.config.storage.aws.secret.access.key': SECRET, 'rsm.config.chunk.size': String(256 * 1024),
        });
      }
      server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir(), config: parseBrokerConfig(settings) });
      bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
      client = new ClusterClient({ bootstrap });
      const configs = [['remote.storage.enable', 'true'], ['segment.bytes', String(1024 * 1024)], ['local.retention.bytes', '0']].map(([name, value]) => ({ name, value }));
      const created = await client.admin(ApiKey.CreateTopics, {
        topics: ['tiered', 'tiered-txn'].map((name) => ({ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs })), timeoutMs: 10_000, validateOnly: false,
      }, 7);
      for (const t of created.topics) assert.equal(t.errorCode, 0, t.errorMessage);

      const kafka = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING });
      const producer = kafka.producer({ idempotent: true });
      await producer.connect();
      for (let i = 0; i < RECORDS; i += 40) {
        const messages = Array.from({ length: 40 }, (_, j) => { const e = expected(i + j); return { key: e.k!, value: e.v!, timestamp: String(e.ts), headers: { h: e.h[0]![1] } }; });
        await producer.send({ topic: 'tiered', acks: -1, messages, compression: i % 200 === 0 ? CompressionTypes.GZIP : CompressionTypes.None });
      }
      await producer.disconnect();
      // Committed and aborted transactions, ~0.5 MiB each, so segments roll inside and between them.
      const txProducer = kafka.producer({ transactionalId: 'tiered-tx', maxInFlightRequests: 1, idempotent: true });
      await txProducer.connect();
      for (let round = 0; round < TXN_ROUNDS; round++) {
        const tx = await txProducer.transaction();
        const commit = round % 3 !== 1;
        for (let b = 0; b < 10; b++) {
          await tx.send({ topic: 'tiered-txn', messages: Array.from({ length: 50 }, (_, j) => ({ key: `r${round}`, value: `${commit ? 'committed' : 'aborted'}-${round}-${b * 50 + j}`.padEnd(VALUE_BYTES, 'y') })) });
        }
        if (commit) await tx.commit(); else await tx.abort();
      }
      await txProducer.disconnect();
      txnEnd = await listOffset(client, 'tiered-txn', -1n);
      // Copied, then deleted locally: the local log starts at the active segment.
      await until(60_000, 'local retention after the copy', async () => {
        const local = await listOffset(client, 'tiered', -4n);
        const tiered = await listOffset(client, 'tiered', -5n);
        const localTxn = await listOffset(client, 'tiered-txn', -4n);
        return local > RECORDS / 2 && tiered === local - 1 && localTxn > txnEnd / 2 ? true : undefined;
      }, 100);
    });

    after(async () => {
      client?.close();
      await server?.close();
      if (s3 !== null) await stopS3Server(s3);
      if (remoteDir !== '') rmSync(remoteDir, { recursive: true, force: true });
    });

    it('ListOffsets: EARLIEST is the log start (0, in the tier), EARLIEST_LOCAL the local start, LATEST_TIERED the highest copied offset', async () => {
      assert.equal(await listOffset(client, 'tiered', -2n), 0);
      const local = await listOffset(client, 'tiered', -4n);
      assert.ok(local > 0 && local < RECORDS, `local log start ${local}`);
      assert.equal(await listOffset(client, 'tiered', -5n), local - 1);
      assert.equal(await listOffset(client, 'tiered', -1n), RECORDS);
      assert.equal(await listOffset(client, 'tiered', BigInt(BASE_TS + 10)), 10, 'by timestamp, in the tier');
      assert.equal(await listOffset(client, 'tiered', BigInt(BASE_TS + local + 5)), local + 5, 'by timestamp, on local disk');
      if (backend === 'local') {
        const folders = readdirSync(remoteDir).filter((f) => f.startsWith('tiered-0-'));
        assert.equal(folders.length, 1);
        assert.ok(readdirSync(join(remoteDir, folders[0]!)).some((f) => f.endsWith('.log')), 'segments are objects in the remote directory');
      }
    });

    it('kcat reads every offset from 0 in order, exactly once, keys, headers and timestamps intact', { skip: missing('kcat', hasKcat) }, async () => {
      const c = await runProcess('kcat', ['-C', '-b', bootstrap, '-t', 'tiered', '-p', '0', '-o', 'beginning', '-e', '-q', '-f', '%o|%k|%s|%T|%h\\n'], null, 120_000);
      assert.equal(c.code, 0, c.stderr);
      const rows = c.stdout.trim().split('\n').map((l): Row => {
        const [o, k, v, ts, h] = l.split('|');
        const [hk, hv] = h!.split('=');
        return { o: Number(o), k: k!, v: v!, ts: Number(ts), h: [[hk!, hv!]] };
      });
      checkRows(rows, RECORDS, 'kcat');
    });

    for (const [lib, module] of [['confluent', 'confluent_kafka'], ['kafka-python', 'kafka']] as const) {
      it(`${lib} reads every offset from 0${lib === 'confluent' ? ', and read_committed across the tier boundary shows no aborted record' : ''}`, { skip: missing(`python3 ${module}`, hasModule(module)) }, async () => {
        const r = await runProcess(PYTHON, ['test/tiered/python/read_all.py', lib, bootstrap, 'tiered', 'read_uncommitted', String(RECORDS)], null, 120_000);
        assert.equal(r.code, 0, r.stderr);
        checkRows(JSON.parse(r.stdout) as Row[], RECORDS, lib);
        // Debian's kafka-python (2.0) has no isolation_level: read_committed is librdkafka's and kafkajs' here.
        if (lib === 'kafka-python') return;
        const lastData = txnEnd - 1 - 1; // the last record before the final transaction's marker
        const t = await runProcess(PYTHON, ['test/tiered/python/read_all.py', lib, bootstrap, 'tiered-txn', 'read_committed', String(lastData + 1)], null, 120_000);
        assert.equal(t.code, 0, t.stderr);
        const values = (JSON.parse(t.stdout) as Row[]).map((x) => x.v!);
        assert.equal(values.filter((v) => v.startsWith('aborted')).length, 0, `${lib}: no aborted record`);
        const committedRounds = Array.from({ length: TXN_ROUNDS }, (_, i) => i).filter((i) => i % 3 !== 1).length;
        assert.equal(values.length, committedRounds * 500, `${lib}: every committed record once`);
        assert.equal(new Set(values).size, values.length);
      });
    }

    it('kafkajs reads every offset from 0 in order, exactly once', async () => {
      const kafka = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING });
      const consumer = kafka.consumer({ groupId: `tiered-reader-${backend}`, maxBytesPerPartition: 256 * 1024 });
      await consumer.connect();
      await consumer.subscribe({ topic: 'tiered', fromBeginning: true });
      const rows: Row[] = [];
      const done = new Promise<void>((resolve) => {
        void consumer.run({
          eachMessage: async ({ message }) => {
            rows.push({ o: Number(message.offset), k: message.key?.toString() ?? null, v: message.value?.toString() ?? null, ts: Number(message.timestamp), h: Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]) });
            if (rows.length === RECORDS) resolve();
          },
        });
      });
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([done, new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`kafkajs read ${rows.length} records`)), 90_000); })]);
      } finally {
        clearTimeout(timer);
        await consumer.disconnect();
      }
      checkRows(rows, RECORDS, 'kafkajs');
    });

    it('/metrics has Kafka\'s remote copy, fetch and size metrics per topic', async () => {
      const text = await nodeMetrics(server).metrics();
      const value = (name: string) => Number(new RegExp(`^kafka_server_brokertopicmetrics_${name}\\{topic="tiered"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
      assert.ok(value('remotecopybytes_total') > 1024 * 1024, 'copied bytes');
      assert.ok(value('remotecopyrequests_total') >= 2, 'copied segments');
      assert.ok(value('remotefetchbytes_total') > 0 && value('remotefetchrequests_total') > 0, 'remote reads');
      assert.equal(value('remotecopyerrors_total'), 0);
      assert.equal(value('remotecopylagsegments'), 0);
      assert.equal(value('remotelogsizebytes'), value('remotecopybytes_total'));
    });

    it('deleting the topic deletes its remote objects', async () => {
      const r = await client.admin(ApiKey.DeleteTopics, { topicNames: ['tiered-txn'], topics: [], timeoutMs: 10_000 }, 5);
      assert.equal(r.responses[0].errorCode, 0);
      if (backend === 'local') {
        await until(30_000, 'remote objects deleted', async () => (readdirSync(remoteDir).some((f) => f.startsWith('tiered-txn-0-') && existsSync(join(remoteDir, f))) ? undefined : true), 100);
        return;
      }
      const store = new S3ObjectStore({
        bucket: BUCKET, region: 'us-east-1', endpoint: `http://127.0.0.1:${s3!.port}`, pathStyle: true, partBytes: S3_PART_BYTES_MIN, multipartThresholdBytes: S3_PART_BYTES_MIN, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET },
      });
      try {
        assert.ok((await store.list('tiered-0-')).length > 0, 'the other topic\'s objects are in the bucket');
        await until(30_000, 'the topic\'s prefix in the bucket empty', async () => ((await store.list('tiered-txn-0-')).length === 0 ? true : undefined), 100);
      } finally {
        await store.close();
      }
    });
  });
}

tieredSuite('local');
tieredSuite('s3');

// Old clients that never ask ApiVersions produce legacy message sets (magic 0/1) with Produce
// v0-2; the broker stores them as RecordBatch v2 and modern clients read them back. kcat with
// api.version.request=false: fallback 0.9.0 sends Produce v1 with magic 0 messages; from 0.10.0
// librdkafka turns ApiVersions back on (rd_kafka_new: a "queryable" fallback forces it), so that
// one negotiates and sends v2 batches. Magic 1 comes from kafka-python with api_version=(0, 10).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { runProcess, tempDataDir } from './process-helpers.js';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';

const hasKcat = spawnSync('kcat', ['-V']).status === 0;
if (!hasKcat && process.env.CI) throw new Error('kcat is missing in CI (apt-get install -y kcat)');
const PYTHON = '/usr/bin/python3'; // Debian's python3-kafka is seen by the system python.
const hasKafkaPython = spawnSync(PYTHON, ['-c', 'import kafka']).status === 0;
if (!hasKafkaPython && process.env.CI) throw new Error('python3-kafka is missing in CI (apt-get install -y python3-kafka)');

interface Observed { topic: string; version: number; magic: number }

/** A broker on a data dir, and every Produce it receives (version, first magic byte per partition). */
async function broker(): Promise<{ server: ServerHandle; bootstrap: string; client: ClusterClient; produced: Observed[] }> {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const produced: Observed[] = [];
  server.router.intercept(ApiKey.Produce, (header, request: any) => {
    for (const t of request.topicData) {
      for (const p of t.partitionData) produced.push({ topic: t.name, version: header.requestApiVersion, magic: p.records?.[16] ?? -1 });
    }
    return undefined; // observe only: the handler answers
  });
  const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
  return { server, bootstrap, client: new ClusterClient({ bootstrap }), produced };
}

async function createTopic(client: ClusterClient, name: string, configs: { name: string; value: string }[] = []): Promise<void> {
  const r = await client.admin(ApiKey.CreateTopics, { topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs }], timeoutMs: 5000, validateOnly: false }, 7);
  assert.equal(r.topics[0].errorCode, 0, r.topics[0].errorMessage);
}

const COUNT = 30;
/** Record i: no key every fifth, no value (a tombstone) where i % 7 === 3 unless it has no key either. */
const keyOf = (i: number) => (i % 5 === 0 ? null : `key-${i}`);
const valueOf = (i: number) => (i % 7 === 3 && i % 5 !== 0 ? null : `value-${i}`);

test('kcat with api.version.request=false (fallback 0.9.0 and 0.10.0), each codec: a modern kcat reads back keys, values, timestamps and offsets, and the old one the same values', { skip: hasKcat ? false : 'kcat is not installed (apt-get install kcat)' }, async () => {
  const { server, bootstrap, client, produced } = await broker();
  try {
    const cases = [['0.9.0', 'none'], ['0.9.0', 'gzip'], ['0.9.0', 'snappy'], ['0.9.0', 'lz4'], ['0.10.0', 'none'], ['0.10.0', 'gzip']] as const;
    for (const [fallback, codec] of cases) {
      const topic = `legacy-kcat-${fallback}-${codec}`;
      await createTopic(client, topic);
      const startMs = Date.now();
      // -Z: an empty key or value is sent as NULL.
      const lines = Array.from({ length: COUNT }, (_, i) => `${keyOf(i) ?? ''}:${valueOf(i) ?? ''}`).join('\n') + '\n';
      const p = await runProcess('kcat', ['-P', '-b', bootstrap, '-t', topic, '-p', '0', '-K', ':', '-Z', '-z', codec,
        '-X', 'api.version.request=false', '-X', `broker.version.fallback=${fallback}`], lines);
      assert.equal(p.code, 0, `${topic}: ${p.stderr}`);
      const c = await runProcess('kcat', ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%o|%K|%k|%S|%s|%T\\n']);
      assert.equal(c.code, 0, `${topic}: ${c.stderr}`);
      const rows = c.stdout.trim().split('\n').map((l) => l.split('|'));
      assert.equal(rows.length, COUNT, `${topic}: ${rows.length} records`);
      rows.forEach(([offset, keyLength, key, valueLength, value, ts], i) => {
        assert.equal(Number(offset), i, `${topic}: offset`);
        assert.equal(keyLength === '-1' ? null : key, keyOf(i), `${topic}: key of ${i}`);
        assert.equal(valueLength === '-1' ? null : value, valueOf(i), `${topic}: value of ${i}`);
        // Magic 0 has no timestamp: Kafka up-converts it to -1 (NO_TIMESTAMP) under CreateTime.
        if (fallback === '0.9.0') assert.equal(Number(ts), -1, `${topic}: timestamp of ${i}`);
        else assert.ok(Number(ts) >= startMs && Number(ts) <= Date.now(), `${topic}: timestamp ${ts}`);
      });
      // The same old client reads them back too (ListOffsets v0 for -o beginning, then an old Fetch).
      const old = await runProcess('kcat', ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%o|%s\\n',
        '-X', 'api.version.request=false', '-X', `broker.version.fallback=${fallback}`]);
      assert.equal(old.code, 0, `${topic} (old consumer): ${old.stderr}`);
      assert.deepEqual(old.stdout.trim().split('\n'), rows.map(([offset, , , , value]) => `${offset}|${value}`), `${topic}: the old consumer reads the same`);
      const sent = produced.filter((o) => o.topic === topic);
      assert.ok(sent.length > 0, `${topic}: produce requests seen`);
      if (fallback === '0.9.0') {
        for (const o of sent) assert.deepEqual([o.version, o.magic], [1, 0], `${topic}: Produce v1 with magic 0 messages`);
      }
    }
  } finally {
    client.close();
    await server.close();
  }
});

test('librdkafka (kcat) with api.version.request=false and broker.version.fallback=0.9.0.0: 20 values of a few hundred bytes, 4 per set, to a CreateTime topic are all delivered (issue 30)', { skip: hasKcat ? false : 'kcat is not installed (apt-get install kcat)' }, async () => {
  const { server, bootstrap, client, produced } = await broker();
  try {
    // Without keys, and with keys starting with 'p' (0x70): in a magic-0 message the key's first
    // byte sits where a v2 batch has the transactional attribute bit, which once sent such a
    // produce to the transaction coordinator and answered it NOT_ENOUGH_REPLICAS until timeout.
    for (const keyed of [false, true]) {
      const topic = `legacy-librdkafka-${keyed ? 'keyed' : 'values'}`;
      await createTopic(client, topic, [{ name: 'message.timestamp.type', value: 'CreateTime' }]);
      const values = Array.from({ length: 20 }, (_, i) => `value-${i}-${'v'.repeat(300 + i)}`);
      const lines = values.map((v, i) => (keyed ? `partner-${i}:${v}` : v)).join('\n') + '\n';
      const p = await runProcess('kcat', ['-P', '-b', bootstrap, '-t', topic, '-p', '0', ...(keyed ? ['-K', ':'] : []),
        '-X', 'api.version.request=false', '-X', 'broker.version.fallback=0.9.0.0', '-X', 'batch.num.messages=4', '-X', 'linger.ms=20',
        '-X', 'message.timeout.ms=10000'], lines, 30_000);
      assert.equal(p.code, 0, `${topic}: ${p.stderr}`);
      const sent = produced.filter((o) => o.topic === topic);
      assert.ok(sent.length >= 5, `${topic}: ${sent.length} produce requests for 20 values 4 per set`);
      for (const o of sent) assert.deepEqual([o.version, o.magic], [1, 0], `${topic}: Produce v1 with magic 0 messages`);
      const c = await runProcess('kcat', ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%o|%k|%s\\n']);
      assert.equal(c.code, 0, `${topic}: ${c.stderr}`);
      assert.deepEqual(c.stdout.trim().split('\n'), values.map((v, i) => `${i}|${keyed ? `partner-${i}` : ''}|${v}`), `${topic}: every value, in order`);
    }
  } finally {
    client.close();
    await server.close();
  }
});

test('kafka-python with api_version (0, 9) and (0, 10), with and without gzip: produce answers and a modern consumer agree', { skip: hasKafkaPython ? false : 'python3-kafka is not installed (apt-get install python3-kafka)' }, async () => {
  const { server, bootstrap, client, produced } = await broker();
  try {
    const ts0 = Date.now() - 60_000;
    for (const [version, codec, timestampType] of [
      ['0.9', 'none', 'CreateTime'], ['0.9', 'gzip', 'CreateTime'], ['0.10', 'none', 'CreateTime'], ['0.10', 'gzip', 'CreateTime'], ['0.10', 'gzip', 'LogAppendTime'],
    ] as const) {
      const topic = `legacy-kp-${version}-${codec}-${timestampType}`;
      await createTopic(client, topic, [{ name: 'message.timestamp.type', value: timestampType }]);
      const startMs = Date.now();
      const r = await runProcess(PYTHON, ['test/broker/python/legacy_roundtrip.py', bootstrap, topic, version, codec, String(COUNT), String(ts0)], null, 60_000);
      assert.equal(r.code, 0, `${topic}: ${r.stderr}`);
      const out = JSON.parse(r.stdout) as { sent: [number, number][]; rows: [number, string | null, string | null, number, number][] };
      assert.deepEqual(out.sent.map(([o]) => o), Array.from({ length: COUNT }, (_, i) => i), `${topic}: offsets from the produce answers`);
      assert.equal(out.rows.length, COUNT, `${topic}: ${out.rows.length} records`);
      out.rows.forEach(([offset, key, value, ts, type], i) => {
        assert.equal(offset, i);
        assert.equal(key, keyOf(i), `${topic}: key of ${i}`);
        assert.equal(value, valueOf(i), `${topic}: value of ${i}`);
        if (timestampType === 'LogAppendTime') {
          assert.equal(type, 1, `${topic}: timestamp type`);
          assert.ok(ts >= startMs && ts <= Date.now(), `${topic}: append time ${ts}`);
          // Produce v2 answers carry the append time, which kafka-python reports per record.
          assert.equal(out.sent[i]![1], ts, `${topic}: the produce answer's log append time`);
        } else {
          assert.equal(type, 0, `${topic}: timestamp type`);
          assert.equal(ts, version === '0.9' ? -1 : ts0 + i, `${topic}: timestamp of ${i}`);
        }
      });
      const expected = version === '0.9' ? [1, 0] : [2, 1];
      for (const o of produced.filter((p) => p.topic === topic)) assert.deepEqual([o.version, o.magic], expected, `${topic}: Produce version and magic`);
    }
  } finally {
    client.close();
    await server.close();
  }
});

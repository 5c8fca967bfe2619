// MirrorMaker 2's contract between two single-node clusters on loopback: real producers (kafkajs,
// and librdkafka through kcat) write to A while the mirror runs; every acknowledged record is on B
// in its partition's order, with its key, value, headers and timestamp.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Kafka, logLevel } from 'kafkajs';
import { ApiKey } from '../../src/protocol/index.js';
import { Cluster, fetchCommitted, type FetchedRecord } from '../../src/client/index.js';
import { decodeHeartbeat, decodeOffsetSync } from '../../src/mirror/index.js';
import { runProcess } from '../broker/process-helpers.js';
import { eventually, startMirror, twoClusters, type TwoClusters } from './helpers.js';

const hasKcat = spawnSync('kcat', ['-V']).status === 0;

/** Every record of a topic's partitions, read to the high watermark. */
export async function readAll(bootstrap: string, topic: string, partitions: number): Promise<Map<number, FetchedRecord[]>> {
  const cluster = new Cluster({ bootstrap });
  const out = new Map<number, FetchedRecord[]>(Array.from({ length: partitions }, (_, p) => [p, []]));
  const positions = new Map<number, number>(Array.from({ length: partitions }, (_, p) => [p, 0]));
  try {
    for (let round = 0; positions.size > 0 && round < 10_000; round++) {
      const fetched = await fetchCommitted(cluster, new Map([[topic, positions]]), { maxWaitMs: 0 });
      for (const f of fetched) {
        out.get(f.partition)!.push(...f.records);
        positions.set(f.partition, f.next);
        if (f.next >= f.highWatermark) positions.delete(f.partition);
      }
    }
  } finally {
    cluster.close();
  }
  return out;
}

export async function createTopic(c: TwoClusters, cluster: 'a' | 'b', name: string, partitions: number, configs: { name: string; value: string }[] = []): Promise<void> {
  const client = cluster === 'a' ? c.aClient : c.bClient;
  const r = await client.admin(ApiKey.CreateTopics, { topics: [{ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs }], timeoutMs: 30_000, validateOnly: false }, 7);
  assert.equal(r.topics[0].errorCode, 0, `create ${name}`);
  await client.retrying(() => client.topic(name));
}

interface Sent { key: string; value: string }

/** kafkajs writes `count` records in batches of 20 while the mirror runs; returns what A acknowledged. */
export async function kafkajsWrites(bootstrap: string, topic: string, count: number, tag: string): Promise<Sent[]> {
  const kafka = new Kafka({ brokers: [bootstrap], clientId: `kafkajs-${tag}`, logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const sent: Sent[] = [];
  try {
    for (let i = 0; i < count; i += 20) {
      const messages = Array.from({ length: Math.min(20, count - i) }, (_, j) => ({
        key: `${tag}-k${(i + j) % 7}`, value: `${tag}-v${i + j}`, timestamp: String(1_700_000_000_000 + i + j), headers: { h: `${tag}-h${i + j}` },
      }));
      await producer.send({ topic, messages, acks: -1 });
      for (const m of messages) sent.push({ key: m.key, value: m.value });
    }
  } finally {
    await producer.disconnect();
  }
  return sent;
}

/** kcat (librdkafka) writes `count` keyed records with a header, acks=all (a child process: the brokers run in this one). */
export async function kcatWrites(bootstrap: string, topic: string, count: number, tag: string): Promise<Sent[]> {
  const lines = Array.from({ length: count }, (_, i) => `${tag}-k${i % 5}|${tag}-v${i}`).join('\n') + '\n';
  const r = await runProcess('kcat', ['-P', '-b', bootstrap, '-t', topic, '-K', '|', '-H', `h=${tag}`, '-X', 'acks=all'], lines, 60_000);
  assert.equal(r.code, 0, `kcat: ${r.stderr}`);
  return Array.from({ length: count }, (_, i) => ({ key: `${tag}-k${i % 5}`, value: `${tag}-v${i}` }));
}

test('A->B: kafkajs and kcat records written while the mirror runs are all on B in per-partition order with key, value, headers and timestamp (at least once)', { timeout: 90_000 }, async () => {
  const c = await twoClusters();
  const engine = await startMirror(c);
  try {
    await createTopic(c, 'a', 'orders', 3);
    const started = Date.now();
    const [viaKafkajs, viaKcat] = await Promise.all([
      kafkajsWrites(c.aBootstrap, 'orders', 2000, 'js'),
      hasKcat ? kcatWrites(c.aBootstrap, 'orders', 1000, 'rd') : Promise.resolve([]),
    ]);
    if (!hasKcat) console.log('# kcat not installed: the librdkafka producer is skipped');
    const source = await readAll(c.aBootstrap, 'orders', 3);
    const total = [...source.values()].reduce((n, r) => n + r.length, 0);
    assert.equal(total, viaKafkajs.length + viaKcat.length);
    await eventually('A.orders to catch up', 30_000, async () => {
      const target = await readAll(c.bBootstrap, 'A.orders', 3).catch(() => null);
      return target !== null && [...target.values()].reduce((n, r) => n + r.length, 0) >= total;
    });
    const elapsedMs = Date.now() - started;
    const target = await readAll(c.bBootstrap, 'A.orders', 3);
    for (let p = 0; p < 3; p++) {
      const src = source.get(p)!;
      const dst = target.get(p)!;
      // At least once: B may hold a record twice after a retry, never out of order and never lose one.
      const seen = dst.map((r) => `${r.key}|${r.value}|${r.timestamp}|${r.headers.map((h) => `${h.key}=${h.value}`).join(',')}`);
      let at = 0;
      for (const r of src) {
        const want = `${r.key}|${r.value}|${r.timestamp}|${r.headers.map((h) => `${h.key}=${h.value}`).join(',')}`;
        const found = seen.indexOf(want, at);
        assert.ok(found >= 0, `A orders-${p}@${r.offset} (${want}) is on B after position ${at}`);
        at = found + 1;
      }
    }
    console.log(`# mirrored ${total} records (kafkajs ${viaKafkajs.length}, kcat ${viaKcat.length}) over 3 partitions in ${elapsedMs} ms`);
    // MirrorMaker 2's own topics, in its formats.
    const syncs = (await readAll(c.aBootstrap, 'mm2-offset-syncs.B.internal', 1)).get(0)!.map((r) => decodeOffsetSync(r.key, r.value));
    assert.ok(syncs.some((s) => s.topic === 'orders'), 'offset syncs for orders on A');
    const beats = (await readAll(c.bBootstrap, 'heartbeats', 1)).get(0)!.map((r) => decodeHeartbeat(r.key, r.value));
    assert.ok(beats.some((h) => h.sourceClusterAlias === 'A' && h.targetClusterAlias === 'B'), 'heartbeats A->B on B');
    await eventually('A.heartbeats on B (B->A heartbeats in A, mirrored)', 15_000, async () => {
      const r = await readAll(c.bBootstrap, 'A.heartbeats', 1).catch(() => null);
      return r !== null && r.get(0)!.some((x) => decodeHeartbeat(x.key, x.value).sourceClusterAlias === 'B');
    });
    const status = await (await fetch(`http://127.0.0.1:${engine.statusAddress!.port}/status`)).json() as { partitions: { topic: string; lagRecords: number }[] };
    assert.ok(status.partitions.filter((p) => p.topic === 'orders').every((p) => p.lagRecords === 0));
    const metrics = await (await fetch(`http://127.0.0.1:${engine.statusAddress!.port}/metrics`)).text();
    assert.match(metrics, /kafka_connect_mirror_mirrorsourceconnector_replication_latency_ms\{source="A",target="B",topic="A.orders",partition="0"\}/);
  } finally {
    await engine.stop();
    await c.close();
  }
});

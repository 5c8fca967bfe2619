// MirrorMaker 2's contract between two single-node clusters on loopback: real producers (kafkajs,
// and librdkafka through kcat) write to A while the mirror runs; every acknowledged record is on B
// in its partition's order, with its key, value, headers and timestamp.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import type { FetchedRecord } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { buildRecordBatch, Compression, iterateBatches } from '../../src/records/index.js';
import { decodeHeartbeat, decodeOffsetSync } from '../../src/mirror/index.js';
import { createTopic, eventually, kafkajsWrites, kcatWrites, readAll, startMirror, twoClusters } from './helpers.js';


test('A->B: kafkajs and kcat records written while the mirror runs are all on B in per-partition order with key, value, headers and timestamp (at least once)', { timeout: 90_000 }, async () => {
  const c = await twoClusters();
  const engine = await startMirror(c);
  try {
    await createTopic(c, 'a', 'orders', 3);
    const started = Date.now();
    const [viaKafkajs, viaKcat] = await Promise.all([
      kafkajsWrites(c.aBootstrap, 'orders', 2000, 'js'),
      kcatWrites(c.aBootstrap, 'orders', 1000, 'rd'),
    ]);
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
    // A restarted mirror shows where it resumes (the stored source offsets), before any new record.
    await engine.stop();
    const again = await startMirror(c);
    try {
      const ends = [0, 1, 2].map((p) => source.get(p)!.at(-1)!.offset + 1);
      await eventually('the restarted mirror to show each partition at its end', 30_000, async () => {
        const s = await (await fetch(`http://127.0.0.1:${again.statusAddress!.port}/status`)).json() as { partitions: { topic: string; partition: number; position: number }[] };
        const orders = s.partitions.filter((p) => p.topic === 'orders').sort((x, y) => x.partition - y.partition);
        return orders.length === 3 && orders.every((p) => p.position === ends[p.partition]);
      });
    } finally {
      await again.stop();
    }
  } finally {
    await engine.stop();
    await c.close();
  }
});

test('topic filters, config sync, new partitions and the cycle guard with flows both ways', { timeout: 90_000 }, async () => {
  const c = await twoClusters();
  await createTopic(c, 'a', 'orders', 2, [{ name: 'retention.ms', value: '123456' }]);
  await createTopic(c, 'a', 'payments-secret', 1);
  await createTopic(c, 'a', 'logs', 1);
  await createTopic(c, 'b', 'payments', 1);
  const engine = await startMirror(c, { 'B->A.enabled': 'true', 'topics': 'orders.*, payments.*, A\\..*, B\\..*', 'topics.exclude': '.*-secret' });
  const configOf = async (client: typeof c.aClient, topic: string, name: string) => {
    const r = await client.admin(ApiKey.DescribeConfigs, { resources: [{ resourceType: 2, resourceName: topic, configurationKeys: [name] }], includeSynonyms: false, includeDocumentation: false }, 4);
    return r.results[0].configs.find((x: { name: string }) => x.name === name)?.value as string | undefined;
  };
  const topicsOf = async (client: typeof c.aClient) => new Map((await client.metadata(null)).map((t) => [t.name, t.partitions.length]));
  try {
    await eventually('A.orders on B and B.payments on A', 20_000, async () => (await topicsOf(c.bClient)).get('A.orders') === 2 && (await topicsOf(c.aClient)).has('B.payments'));
    assert.equal(await configOf(c.bClient, 'A.orders', 'retention.ms'), '123456', 'configs set at the source come with the topic');
    // Config changes follow; new partitions appear; new records in them too.
    const alter = await c.aClient.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: 2, resourceName: 'orders', configs: [{ name: 'retention.ms', configOperation: 0, value: '654321' }] }], validateOnly: false }, 1);
    assert.equal(alter.responses[0].errorCode, 0);
    const grow = await c.aClient.admin(ApiKey.CreatePartitions, { topics: [{ name: 'orders', count: 4, assignments: null }], timeoutMs: 30_000, validateOnly: false }, 3);
    assert.equal(grow.results[0].errorCode, 0);
    await eventually('retention.ms to follow', 20_000, async () => (await configOf(c.bClient, 'A.orders', 'retention.ms')) === '654321');
    await eventually('A.orders to have 4 partitions', 20_000, async () => (await topicsOf(c.bClient)).get('A.orders') === 4);
    const kafka = new Kafka({ brokers: [c.aBootstrap], logLevel: logLevel.NOTHING });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'orders', messages: [{ partition: 3, key: 'k', value: 'in a new partition' }] });
    await producer.disconnect();
    await eventually('the record in the new partition on B', 20_000, async () => (await readAll(c.bBootstrap, 'A.orders', 4)).get(3)!.some((r) => r.value?.toString() === 'in a new partition'));
    // Filters and the cycle guard: nothing excluded or unmatched went over, nothing came back.
    const onB = await topicsOf(c.bClient);
    const onA = await topicsOf(c.aClient);
    assert.ok(!onB.has('A.payments-secret') && !onB.has('A.logs'), `filtered topics stay on A: ${[...onB.keys()].join(', ')}`);
    assert.ok(!onA.has('B.A.orders') && !onB.has('A.B.payments'), `no topic came back: A has ${[...onA.keys()].join(', ')}`);
    assert.ok(onB.has('A.heartbeats') && onA.has('B.heartbeats'), 'each side sees the other\'s heartbeats');
  } finally {
    await engine.stop();
    await c.close();
  }
});

test('large source batches pass whole (records as bytes, compression kept) between small ones read and rebatched: B holds every record in order with its key, value, headers and timestamp, and the offset syncs translate', { timeout: 90_000 }, async () => {
  const c = await twoClusters();
  const engine = await startMirror(c);
  try {
    await createTopic(c, 'a', 'big', 1);
    const conn = await c.aClient.leaderFor('big', 0);
    const value = (i: number) => `${i}:${randomBytes(600).toString('base64')}`;
    let n = 0;
    const sentBatches: { compression: Compression; count: number }[] = [];
    // Large (whole) and small (rebatched) batches in turn, gzip and uncompressed, with keys, headers and explicit timestamps.
    for (const [count, compression] of [[300, Compression.Gzip], [5, Compression.None], [250, Compression.None], [3, Compression.Gzip], [300, Compression.Gzip]] as const) {
      const records = Array.from({ length: count }, () => { const i = n++; return { key: Buffer.from(`k${i}`), value: Buffer.from(value(i)), headers: [{ key: 'h', value: Buffer.from(`v${i}`) }], timestamp: 1_700_000_000_000 + i }; });
      const batch = await buildRecordBatch({ records, compression });
      const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: 'big', partitionData: [{ index: 0, records: batch }] }] });
      assert.equal(r.responses[0].partitionResponses[0].errorCode, 0);
      sentBatches.push({ compression, count });
    }
    const source = (await readAll(c.aBootstrap, 'big', 1)).get(0)!;
    assert.equal(source.length, n);
    await eventually('A.big to catch up', 30_000, async () => ((await readAll(c.bBootstrap, 'A.big', 1).catch(() => null))?.get(0)?.length ?? 0) >= n);
    const target = (await readAll(c.bBootstrap, 'A.big', 1)).get(0)!;
    const text = (r: FetchedRecord) => `${r.key}|${r.value}|${r.timestamp}|${r.headers.map((h) => `${h.key}=${h.value}`).join(',')}`;
    assert.deepEqual(target.map(text), source.map(text), 'B holds A\'s records in order, once, with keys, values, headers and timestamps');
    // The large batches arrived as they were sent (one batch each, gzip kept); the small ones were rebatched.
    const fetched = await (await c.bClient.leaderFor('A.big', 0)).send(ApiKey.Fetch, 12, {
      replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 16 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: 'A.big', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 16 << 20 }] }],
      forgottenTopicsData: [], rackId: '',
    });
    const onB = [...iterateBatches(fetched.responses[0].partitions[0].records)].map((b) => ({ compression: b.compression, count: b.recordCount }));
    for (const big of sentBatches.filter((b) => b.count >= 250)) assert.ok(onB.some((b) => b.compression === big.compression && b.count === big.count), `a ${big.count}-record batch (codec ${big.compression}) on B as sent: ${JSON.stringify(onB)}`);
    // Every offset sync points at the same record on both sides.
    await eventually('offset syncs for big', 15_000, async () => (await readAll(c.aBootstrap, 'mm2-offset-syncs.B.internal', 1)).get(0)!.some((r) => decodeOffsetSync(r.key, r.value).topic === 'big'));
    const syncs = (await readAll(c.aBootstrap, 'mm2-offset-syncs.B.internal', 1)).get(0)!.map((r) => decodeOffsetSync(r.key, r.value)).filter((s) => s.topic === 'big');
    for (const s of syncs) assert.equal(text(target[s.downstreamOffset]!), text(source[s.upstreamOffset]!), `sync ${s.upstreamOffset} -> ${s.downstreamOffset}`);
  } finally {
    await engine.stop();
    await c.close();
  }
});

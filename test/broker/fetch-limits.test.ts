// KIP-74 on the wire: a Fetch answer holds at most max_bytes of records, and each partition at
// most its partition_max_bytes, except that the first batch of the first partition with data comes
// whole however large, so a consumer always makes progress. Checked against a real broker with
// random batch sizes, partition counts and limits, on every Fetch version from 4 (sessionless and
// through a fetch session, whose incremental fetches rotate the partitions that returned data to
// the back so that one partition cannot starve the others).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { ClusterClient } from '../../src/client/index.js';
import type { BrokerConnection } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { buildRecordBatch } from '../../src/records/index.js';
import { FetchLimitChecker, fetchLimitViolations } from './fetch-limits.js';
import { within } from './process-helpers.js';

const RUNS = Number(process.env.LOGLINE_FETCH_LIMIT_RUNS ?? 100);

/** Creates a topic; returns its id. */
async function createTopic(client: ClusterClient, name: string, partitions: number): Promise<string> {
  const r = await client.admin(ApiKey.CreateTopics, { topics: [{ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false }, 7);
  assert.equal(r.topics[0].errorCode, 0, `create ${name}`);
  return r.topics[0].topicId;
}

/** Appends one batch of `records` values of `valueBytes` each; returns its size as stored (= as sent). */
async function produceBatch(conn: BrokerConnection, topic: string, partition: number, records: number, valueBytes: number): Promise<number> {
  const batch = await buildRecordBatch({ records: Array.from({ length: records }, (_, i) => ({ value: Buffer.alloc(valueBytes, 97 + i) })) });
  const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: partition, records: batch }] }] });
  assert.equal(r.responses[0].partitionResponses[0].errorCode, 0);
  return batch.length;
}

interface Stored { offsets: number[]; sizes: number[]; end: number } // each batch's base offset and size

/** Kafka's ReplicaManager.readFromLog, as a model: the record bytes each partition should return. */
function expectedBytes(logs: Stored[], fetchOffsets: number[], partitionMaxBytes: number[], maxBytes: number, order: number[]): number[] {
  const out = new Array<number>(logs.length).fill(0);
  let budget = maxBytes;
  let anyData = false;
  for (const i of order) {
    const log = logs[i]!;
    let first = log.offsets.findIndex((base, b) => fetchOffsets[i]! < base + (log.offsets[b + 1] ?? log.end) - base);
    if (fetchOffsets[i]! >= log.end) first = -1;
    if (first < 0) continue;
    const limit = Math.min(partitionMaxBytes[i]!, Math.max(0, budget));
    let taken = 0;
    if (!anyData && log.sizes[first]! >= limit) taken = log.sizes[first]!;
    else for (let b = first; b < log.sizes.length && taken + log.sizes[b]! <= limit; b++) taken += log.sizes[b]!;
    out[i] = taken;
    budget -= taken;
    if (taken > 0) anyData = true;
  }
  return out;
}

/** A consumer's Fetch; from v13 the topic goes by `topicId`. */
function fetchRequest(topic: string, version: number, maxBytes: number, fetchOffsets: number[], partitionMaxBytes: number[], session = { id: 0, epoch: -1 }, topicId = '') {
  return {
    replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes, isolationLevel: 0, sessionId: session.id, sessionEpoch: session.epoch,
    topics: fetchOffsets.length === 0 ? [] : [{
      topic: version >= 13 ? '' : topic, topicId, partitions: fetchOffsets.map((o, partition) => ({
        partition, currentLeaderEpoch: -1, fetchOffset: BigInt(o), lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: partitionMaxBytes[partition]!,
      })),
    }],
    forgottenTopicsData: [], rackId: '',
  };
}

async function withBroker(body: (server: ServerHandle, client: ClusterClient, conn: BrokerConnection) => Promise<void>): Promise<void> {
  const server = await startServer({ config: parseBrokerConfig({ 'node.id': '1', 'listeners': 'PLAINTEXT://127.0.0.1:0' }) });
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
  try {
    await createTopic(client, 'warmup', 1);
    await body(server, client, await client.leaderFor('warmup', 0));
  } finally {
    client.close();
    await server.close();
  }
}

test('property: a Fetch answer keeps max_bytes and partition_max_bytes except for the first batch with data, and always progresses', async () => {
  await withBroker(async (_server, client, conn) => {
    let n = 0;
    const batchArb = fc.record({ records: fc.integer({ min: 1, max: 3 }), valueBytes: fc.integer({ min: 0, max: 4000 }) });
    await fc.assert(fc.asyncProperty(
      fc.array(fc.array(batchArb, { maxLength: 6 }), { minLength: 1, maxLength: 4 }),
      fc.integer({ min: 0, max: 30_000 }),
      fc.array(fc.integer({ min: 0, max: 20_000 }), { minLength: 4, maxLength: 4 }),
      fc.array(fc.nat(), { minLength: 4, maxLength: 4 }),
      fc.constantFrom(3, 4, 7, 11, 12, 13, 17),
      async (batches, maxBytes, partitionMaxBytes, offsetPicks, version) => {
        const topic = `kip74-${n++}`;
        const topicId = await createTopic(client, topic, batches.length);
        const logs: Stored[] = [];
        for (let p = 0; p < batches.length; p++) {
          const log: Stored = { offsets: [], sizes: [], end: 0 };
          for (const b of batches[p]!) {
            log.offsets.push(log.end);
            log.sizes.push(await produceBatch(conn, topic, p, b.records, b.valueBytes));
            log.end += b.records;
          }
          logs.push(log);
        }
        const fetchOffsets = logs.map((l, p) => offsetPicks[p]! % (l.end + 1));
        const request = fetchRequest(topic, version, maxBytes, fetchOffsets, partitionMaxBytes, undefined, topicId);
        const response = await conn.send(ApiKey.Fetch, version, request);
        const got = response.responses[0].partitions.map((p: { errorCode: number; records: Buffer | null }) => {
          assert.equal(p.errorCode, 0);
          return p.records?.length ?? 0;
        });
        assert.deepEqual(fetchLimitViolations(request, response), []);
        assert.deepEqual(got, expectedBytes(logs, fetchOffsets, partitionMaxBytes, maxBytes, logs.map((_, i) => i)), 'each partition returns whole batches up to what is left of its limits');
        const hasData = fetchOffsets.some((o, p) => o < logs[p]!.end);
        assert.equal(got.some((b: number) => b > 0), hasData, 'an offset with data gives at least one batch');
      },
    ), { numRuns: RUNS });
  });
});

test('incremental fetches of a session serve every partition in turn when max_bytes holds one batch', async () => {
  await withBroker(async (_server, client, conn) => {
    const topic = 'rotation';
    await createTopic(client, topic, 3);
    const sizes: number[] = [];
    for (let p = 0; p < 3; p++) for (let i = 0; i < 4; i++) sizes.push(await produceBatch(conn, topic, p, 1, 5000));
    const maxBytes = 6000; // one batch at a time
    const offsets = [0, 0, 0];
    const first = await conn.send(ApiKey.Fetch, 12, fetchRequest(topic, 12, maxBytes, offsets, [1 << 20, 1 << 20, 1 << 20], { id: 0, epoch: 0 }));
    const session = { id: first.sessionId as number, epoch: 1 };
    assert.ok(session.id > 0);
    const served: number[] = [];
    const take = (response: { responses: { partitions: { partitionIndex: number; records: Buffer | null }[] }[] }) => {
      for (const t of response.responses) {
        for (const p of t.partitions) {
          if ((p.records?.length ?? 0) === 0) continue;
          served.push(p.partitionIndex);
          offsets[p.partitionIndex]! += 1;
        }
      }
    };
    take(first);
    for (let i = 0; i < 5; i++) {
      // Name the partitions whose fetch offset moved, as clients do in an incremental fetch.
      const moved = served.slice(-1);
      const request = fetchRequest(topic, 12, maxBytes, [], [], session);
      request.topics = [{ topic, topicId: '', partitions: moved.map((partition) => ({ partition, currentLeaderEpoch: -1, fetchOffset: BigInt(offsets[partition]!), lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 })) }];
      const r = await conn.send(ApiKey.Fetch, 12, request);
      assert.equal(r.errorCode, 0);
      session.epoch++;
      take(r);
    }
    // The full fetch that opens the session keeps the request's order (Kafka's FullFetchContext);
    // from then on each partition that returned a batch goes to the back. Without that, partition 0
    // would be served until it had nothing left: 0, 0, 0, 0, 1, 1.
    assert.deepEqual(served, [0, 0, 1, 2, 0, 1], 'round robin over the partitions, one batch each');
  });
});

test('replica fetches keep replica.fetch.response.max.bytes too, and the follower still catches up on records larger than half of it', { timeout: 120_000 }, async () => {
  const { startCluster } = await import('../../src/index.js');
  const cluster = await within(60_000, 'startCluster', startCluster({
    nodes: 2, config: { 'replica.fetch.response.max.bytes': '1000000', 'replica.fetch.max.bytes': '20000000' },
  }));
  const client = new ClusterClient({ bootstrap: cluster.bootstrap });
  const violations: string[] = [];
  const checker = new FetchLimitChecker();
  let replicaFetchesWithData = 0;
  try {
    for (const node of cluster.nodes) {
      node.server!.router.observe(ApiKey.Fetch, (_header, request: any, response: any) => {
        const replicaId = request.replicaState?.replicaId >= 0 ? request.replicaState.replicaId : request.replicaId;
        if (replicaId < 0) return;
        if (response.responses.some((t: any) => t.partitions.some((p: any) => (p.records?.length ?? 0) > 0))) replicaFetchesWithData++;
        violations.push(...checker.check(`${node.nodeId}<-${replicaId}`, request, response));
      });
    }
    const topic = 'large-replicated';
    const r = await client.admin(ApiKey.CreateTopics, {
      topics: [{ name: topic, numPartitions: -1, replicationFactor: -1, assignments: [0, 1, 2].map((partitionIndex) => ({ partitionIndex, brokerIds: [1, 2] })), configs: [] }],
      timeoutMs: 10_000, validateOnly: false,
    }, 7);
    assert.equal(r.topics[0].errorCode, 0);
    for (let p = 0; p < 3; p++) {
      await within(10_000, `leader of ${topic}-${p}`, (async () => {
        for (;;) {
          const conn = await client.leaderFor(topic, p).catch(() => null);
          if (conn !== null) {
            const batch = await buildRecordBatch({ records: [{ value: Buffer.alloc(900 * 1024, 1) }] });
            const res = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: p, records: batch }] }] });
            if (res.responses[0].partitionResponses[0].errorCode === 0) return;
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })());
      for (let i = 1; i < 3; i++) await produceBatch(await client.leaderFor(topic, p), topic, p, 1, 900 * 1024);
    }
    const partitionOn = (nodeId: number, p: number) => cluster.nodes.find((n) => n.nodeId === nodeId)!.server!.broker!.replicaManager.partition(topic, p);
    await within(60_000, 'the follower holds all nine records', (async () => {
      while (![0, 1, 2].every((p) => partitionOn(1, p)?.log.logEndOffset === 3 && partitionOn(2, p)?.log.logEndOffset === 3)) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })());
    for (let p = 0; p < 3; p++) assert.deepEqual(await partitionOn(2, p)!.log.read(0, 1 << 30, 3, true), await partitionOn(1, p)!.log.read(0, 1 << 30, 3, true), `the same bytes in ${topic}-${p}`);
    assert.ok(replicaFetchesWithData >= 3, `${replicaFetchesWithData} replica fetches returned records`);
    assert.deepEqual(violations, []);
  } finally {
    client.close();
    await cluster.close();
  }
});

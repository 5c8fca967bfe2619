// auto.leader.rebalance.enable end to end: in a 3-node cluster with
// leader.imbalance.check.interval.seconds=1, a broker is killed (its leaderships move to other
// ISR members), restarted (its replicas catch up and rejoin the ISR), and gets back the partitions
// it is the preferred (first) replica of, without anyone sending ElectLeaders. What was
// acknowledged with acks=all before the kill is still there at its offsets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster } from '../../src/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatchSync, iterateBatches } from '../../src/records/index.js';
import { within } from './process-helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TOPIC = 'balanced';
const PARTITIONS = 3;

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  return within(ms, what, (async () => {
    for (;;) {
      const v = await probe().catch(() => undefined);
      if (v !== undefined) return v;
      await sleep(100);
    }
  })());
}

test('a restarted broker gets its preferred leaderships back from auto.leader.rebalance.enable, without ElectLeaders', { timeout: 180_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({
    nodes: 3, config: { 'leader.imbalance.check.interval.seconds': '1', 'broker.session.timeout.ms': '3000', 'min.insync.replicas': '2' },
  }));
  const client = new ClusterClient({ bootstrap: cluster.bootstrap });
  try {
    const created = await client.admin(ApiKey.CreateTopics, {
      topics: [{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 3, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false,
    }, 7);
    assert.equal(created.topics[0].errorCode, ErrorCode.NONE);
    const preferred = (await client.topic(TOPIC)).partitions.map((p) => p.replicas[0]!);
    // Two batches per partition with acks=all: their offsets are what must survive.
    const acked = new Map<number, number[]>();
    for (let partition = 0; partition < PARTITIONS; partition++) {
      for (const n of [3, 2]) {
        const batch = buildRecordBatchSync({ records: Array.from({ length: n }, (_, i) => ({ key: null, value: Buffer.from(`p${partition}-${n}-${i}`), timestamp: 1_700_000_000_000 + i })) });
        const base = await until(`produce to ${TOPIC}-${partition}`, 30_000, async () => {
          const conn = await client.leaderFor(TOPIC, partition);
          const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 5_000, topicData: [{ name: TOPIC, partitionData: [{ index: partition, records: batch }] }] });
          const pr = r.responses[0].partitionResponses[0];
          return pr.errorCode === ErrorCode.NONE ? Number(pr.baseOffset) : undefined;
        });
        acked.set(partition, [...(acked.get(partition) ?? []), base]);
      }
    }

    // Kill a broker that is not the metadata leader; it is the preferred leader of some partition.
    const controller = cluster.leaderId();
    const victim = cluster.nodes.find((n) => n.nodeId !== controller && preferred.includes(n.nodeId))!;
    await victim.kill();
    await until('leaderships moved off the killed broker', 60_000, async () => {
      const t = await client.topic(TOPIC);
      return t.partitions.every((p) => p.leader >= 0 && p.leader !== victim.nodeId) ? true : undefined;
    });

    await victim.restart();
    // No ElectLeaders: the active controller's balancing pass moves them back once the restarted
    // broker is in the ISR.
    const balanced = await until('every partition led by its preferred replica', 90_000, async () => {
      const t = await client.topic(TOPIC);
      return t.partitions.every((p) => p.leader === p.replicas[0] && p.isr.includes(p.replicas[0]!)) ? t : undefined;
    });
    assert.deepEqual(balanced.partitions.map((p) => p.leader), preferred);

    // The acknowledged batches are on the preferred leaders at the offsets they were acknowledged with.
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const r = await until(`fetch ${TOPIC}-${partition}`, 30_000, async () => {
        const conn = await client.leaderFor(TOPIC, partition);
        const f = await conn.send(ApiKey.Fetch, 12, {
          replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
          topics: [{ topic: TOPIC, partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
          forgottenTopicsData: [], rackId: '',
        });
        const pd = f.responses[0].partitions[0];
        return pd.errorCode === ErrorCode.NONE && pd.records.length > 0 ? pd : undefined;
      });
      const batches = [...iterateBatches(r.records)];
      assert.deepEqual(batches.map((b) => b.baseOffset), acked.get(partition), `${TOPIC}-${partition}: acknowledged batches at their offsets`);
    }
  } finally {
    client.close();
    await cluster.close();
  }
});

// The leader side of replication over the wire in a 3-node cluster (startCluster): the test sends
// Fetch v15 as a follower would (ReplicaState with the follower's broker id and epoch) to the
// partition leader, which moves the high watermark; consumers read only below it. Real follower
// fetchers may be fetching too, so the assertions hold whoever fetched: the high watermark is at
// least what both followers reported, and a consumer never gets a record at or past the high
// watermark its answer carries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster } from '../../src/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatchSync, iterateBatches } from '../../src/records/index.js';
import { within } from './process-helpers.js';

const batch = (n: number) =>
  buildRecordBatchSync({ records: Array.from({ length: n }, (_, i) => ({ key: null, value: Buffer.from(`v${i}`), timestamp: 1_700_000_000_000 + i })) });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const lastOffsets = (records: Buffer | null): number[] =>
  records === null ? [] : [...iterateBatches(records)].map((b) => b.lastOffset);

test('a replica fetch sent as a follower with its broker epoch advances the high watermark; consumers read only below it', { timeout: 120_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({ nodes: 3 }));
  const client = new ClusterClient({ bootstrap: cluster.bootstrap });
  try {
    const created = await client.admin(ApiKey.CreateTopics, {
      topics: [{ name: 'replicated', numPartitions: 1, replicationFactor: 3, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false,
    }, 7);
    assert.equal(created.topics[0].errorCode, ErrorCode.NONE);
    const info = await client.topic('replicated');
    const p0 = info.partitions[0]!;
    assert.equal(p0.replicas.length, 3);
    const followers = p0.replicas.filter((id) => id !== p0.leader);
    const conn = await client.leaderFor('replicated', 0);

    // Two batches: offsets 0-2 and 3-4, acks=1 (the leader alone).
    for (const n of [3, 2]) {
      // The leader may not have applied the topic's creation yet (UNKNOWN_TOPIC_OR_PARTITION): retry.
      await within(10_000, 'produce', (async () => {
        for (;;) {
          const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 5_000, topicData: [{ name: 'replicated', partitionData: [{ index: 0, records: batch(n) }] }] });
          const code = r.responses[0].partitionResponses[0].errorCode;
          if (code === ErrorCode.NONE) return;
          assert.equal(code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
          await sleep(20);
        }
      })());
    }

    const brokerEpoch = (id: number) => cluster.nodes.find((n) => n.nodeId === id)!.server!.broker!.lifecycle!.brokerEpoch;
    const replicaFetch = async (replicaId: number, fetchOffset: number, replicaEpoch = brokerEpoch(replicaId), lastFetchedEpoch = -1) => {
      const r = await conn.send(ApiKey.Fetch, 15, {
        clusterId: null, replicaId: -1, replicaState: { replicaId, replicaEpoch }, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0,
        sessionId: 0, sessionEpoch: -1, forgottenTopicsData: [], rackId: '',
        topics: [{ topic: '', topicId: info.topicId, partitions: [{ partition: 0, currentLeaderEpoch: p0.leaderEpoch, fetchOffset: BigInt(fetchOffset), lastFetchedEpoch, logStartOffset: 0n, partitionMaxBytes: 1 << 20, replicaDirectoryId: 'AAAAAAAAAAAAAAAAAAAAAA' }] }],
      });
      return r.responses[0].partitions[0];
    };
    const consumerFetch = async () => {
      const r = await conn.send(ApiKey.Fetch, 12, {
        replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
        topics: [{ topic: 'replicated', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
        forgottenTopicsData: [], rackId: '',
      });
      return r.responses[0].partitions[0];
    };
    const visibleBelowHw = async () => {
      const c = await consumerFetch();
      assert.equal(c.errorCode, ErrorCode.NONE);
      for (const last of lastOffsets(c.records)) assert.ok(last < Number(c.highWatermark), `record ${last} served at high watermark ${c.highWatermark}`);
      return c;
    };
    await visibleBelowHw();

    // A follower reads past the high watermark, up to the log end.
    const read = await replicaFetch(followers[0]!, 0);
    assert.equal(read.errorCode, ErrorCode.NONE);
    assert.deepEqual(lastOffsets(read.records), [2, 4]);

    // Both followers report offset 3: the high watermark is at least 3, and the first batch is visible.
    for (const id of followers) assert.equal((await replicaFetch(id, 3)).errorCode, ErrorCode.NONE);
    const c3 = await visibleBelowHw();
    assert.ok(Number(c3.highWatermark) >= 3, `high watermark ${c3.highWatermark}`);
    assert.ok(lastOffsets(c3.records).includes(2));

    for (const id of followers) await replicaFetch(id, 5);
    const c5 = await visibleBelowHw();
    assert.equal(c5.highWatermark, 5n);
    assert.deepEqual(lastOffsets(c5.records), [2, 4]);

    // A follower claiming more of the current epoch than the leader has: told where the epoch ends.
    const diverged = await replicaFetch(followers[1]!, 9, undefined, p0.leaderEpoch);
    assert.equal(diverged.errorCode, ErrorCode.NONE);
    assert.deepEqual(diverged.divergingEpoch, { epoch: p0.leaderEpoch, endOffset: 5n });

    // An older broker epoch than the follower fetched with: a previous incarnation, refused.
    assert.equal((await replicaFetch(followers[0]!, 5, brokerEpoch(followers[0]!) - 1n)).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    // A broker that is not a replica may not fetch as one.
    assert.equal((await replicaFetch(99, 0, -1n)).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  } finally {
    client.close();
    await cluster.close();
  }
});

test('a follower that stops fetching leaves the ISR through AlterPartition after replica.lag.time.max.ms; fetching again at the high watermark brings it back', { timeout: 120_000 }, async () => {
  // A long broker session: the killed follower stays registered and unfenced, so only the lag
  // (not fencing) can take it out of the ISR.
  const cluster = await within(60_000, 'startCluster', startCluster({ nodes: 3, config: { 'replica.lag.time.max.ms': '1000', 'broker.session.timeout.ms': '120000' } }));
  let client: ClusterClient | null = null;
  try {
    let controllerId: number | undefined;
    await within(20_000, 'an active controller', (async () => { while ((controllerId = cluster.leaderId()) === undefined) await sleep(20); })());
    const [victim, leaderNode] = cluster.nodes.filter((n) => n.nodeId !== controllerId) as [typeof cluster.nodes[number], typeof cluster.nodes[number]];
    const third = cluster.nodes.find((n) => n !== victim && n !== leaderNode)!;
    client = new ClusterClient({ bootstrap: `127.0.0.1:${leaderNode.brokerPort}` });
    const created = await client.admin(ApiKey.CreateTopics, {
      topics: [{ name: 'lagging', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [leaderNode.nodeId, victim.nodeId, third.nodeId] }], configs: [] }],
      timeoutMs: 10_000, validateOnly: false,
    }, 7);
    assert.equal(created.topics[0].errorCode, ErrorCode.NONE);
    const before = (await client.topic('lagging')).partitions[0]!;
    assert.equal(before.leader, leaderNode.nodeId);
    assert.equal(before.isr.length, 3);
    const victimEpoch = victim.server!.broker!.lifecycle!.brokerEpoch;
    const topicId = (await client.topic('lagging')).topicId;

    await victim.kill();
    // A follower at the log end is in sync however long it has been silent (Kafka's rule): the
    // victim falls behind only once records arrive that it does not fetch.
    const conn = await client.leaderFor('lagging', 0);
    const produced = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 5_000, topicData: [{ name: 'lagging', partitionData: [{ index: 0, records: batch(3) }] }] });
    assert.equal(produced.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    const isrOf = async () => (await client!.metadata(['lagging']))[0]!.partitions[0]!;
    const shrunk = await within(30_000, 'the victim out of the ISR', (async () => {
      for (;;) {
        const p = await isrOf();
        if (!p.isr.includes(victim.nodeId)) return p;
        await sleep(50);
      }
    })());
    assert.ok(shrunk.isr.includes(leaderNode.nodeId));
    assert.equal(shrunk.leader, leaderNode.nodeId);
    assert.equal(shrunk.leaderEpoch, before.leaderEpoch, 'an ISR change keeps the leader epoch');

    // The test fetches as the victim (still registered at its epoch), up to the log end: then it
    // is in sync and is proposed for the ISR again.
    let fetchOffset = 0n;
    const back = await within(30_000, 'the victim back in the ISR', (async () => {
      for (;;) {
        const r = await conn.send(ApiKey.Fetch, 15, {
          clusterId: null, replicaId: -1, replicaState: { replicaId: victim.nodeId, replicaEpoch: victimEpoch }, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20,
          isolationLevel: 0, sessionId: 0, sessionEpoch: -1, forgottenTopicsData: [], rackId: '',
          topics: [{ topic: '', topicId, partitions: [{ partition: 0, currentLeaderEpoch: before.leaderEpoch, fetchOffset, lastFetchedEpoch: fetchOffset === 0n ? -1 : before.leaderEpoch, logStartOffset: 0n, partitionMaxBytes: 1 << 20, replicaDirectoryId: 'AAAAAAAAAAAAAAAAAAAAAA' }] }],
        });
        const answer = r.responses[0].partitions[0];
        assert.equal(answer.errorCode, ErrorCode.NONE);
        const fetched = lastOffsets(answer.records);
        if (fetched.length > 0) fetchOffset = BigInt(fetched[fetched.length - 1]! + 1);
        const p = await isrOf();
        if (p.isr.includes(victim.nodeId)) return p;
        await sleep(50);
      }
    })());
    assert.equal(back.leaderEpoch, before.leaderEpoch);
  } finally {
    client?.close();
    await cluster.close();
  }
});

test('RF 3, min.insync.replicas 2: with two replicas down acks=all is refused with NOT_ENOUGH_REPLICAS, and succeeds again once one returns and catches up; every acknowledged record is read back at its offset', { timeout: 180_000 }, async () => {
  // A controller of its own: two brokers down must not take the metadata quorum with them (the ISR
  // shrinks through the controller).
  const cluster = await within(60_000, 'startCluster', startCluster({ controllers: 1, brokers: 3, config: { 'broker.session.timeout.ms': '2000', 'broker.heartbeat.interval.ms': '300' } }));
  let client: ClusterClient | null = null;
  try {
    const [leaderNode, f1, f2] = cluster.nodes.filter((n) => n.roles.includes('broker')) as [typeof cluster.nodes[number], typeof cluster.nodes[number], typeof cluster.nodes[number]];
    client = new ClusterClient({ bootstrap: `127.0.0.1:${leaderNode.brokerPort}` });
    const created = await client.admin(ApiKey.CreateTopics, {
      topics: [{ name: 'durable', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [leaderNode.nodeId, f1.nodeId, f2.nodeId] }], configs: [{ name: 'min.insync.replicas', value: '2' }] }],
      timeoutMs: 10_000, validateOnly: false,
    }, 7);
    assert.equal(created.topics[0].errorCode, ErrorCode.NONE);
    const conn = await client.leaderFor('durable', 0);
    const acked = new Map<number, number>(); // base offset -> records
    const produce = async (n: number): Promise<number> => {
      const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: 'durable', partitionData: [{ index: 0, records: batch(n) }] }] });
      const p = r.responses[0].partitionResponses[0];
      if (p.errorCode === ErrorCode.NONE) acked.set(Number(p.baseOffset), n);
      return p.errorCode;
    };
    await within(20_000, 'the first acks=all writes', (async () => { while (acked.size < 3) { const code = await produce(2); if (code !== ErrorCode.NONE) await sleep(50); } })());

    // One follower down: the ISR shrinks to two (fenced after the session), writes go on.
    await f1.kill();
    await within(30_000, 'ISR of two', (async () => { while ((await client!.metadata(['durable']))[0]!.partitions[0]!.isr.length !== 2) await sleep(100); })());
    assert.equal(await produce(3), ErrorCode.NONE);

    // Both followers down: the leader alone is below min.insync.replicas, acks=all is refused
    // before anything is appended (NOT_ENOUGH_REPLICAS), or after (NOT_ENOUGH_REPLICAS_AFTER_APPEND)
    // while the ISR shrinks under a waiting write.
    await f2.kill();
    await within(30_000, 'ISR of one', (async () => { while ((await client!.metadata(['durable']))[0]!.partitions[0]!.isr.length !== 1) await sleep(100); })());
    const refused = await produce(1);
    assert.equal(refused, ErrorCode.NOT_ENOUGH_REPLICAS, `acks=all with the leader alone: error ${refused}`);

    // One returns, catches up from the leader and rejoins the ISR: writes succeed again.
    await f1.restart();
    await within(60_000, 'acks=all accepted again', (async () => { for (;;) { if (await produce(2) === ErrorCode.NONE) return; await sleep(200); } })());

    // Every acknowledged batch is on the leader at the offset it was acknowledged with, and on the
    // returned follower too (it replicated up to the high watermark).
    const read = async (port: number) => {
      const c = await new ClusterClient({ bootstrap: `127.0.0.1:${port}` }).broker(port === leaderNode.brokerPort ? leaderNode.nodeId : f1.nodeId);
      try {
        const r = await c.send(ApiKey.Fetch, 12, {
          replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
          topics: [{ topic: 'durable', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
          forgottenTopicsData: [], rackId: '',
        });
        return r.responses[0].partitions[0];
      } finally {
        c.close();
      }
    };
    const onLeader = await read(leaderNode.brokerPort);
    assert.equal(onLeader.errorCode, ErrorCode.NONE);
    const batches = [...iterateBatches(onLeader.records)].map((b) => [b.baseOffset, b.lastOffset - b.baseOffset + 1] as [number, number]);
    for (const [base, n] of acked) assert.ok(batches.some(([b, m]) => b === base && m === n), `acknowledged batch at ${base} (${n} records) is there`);
    // The follower's own log holds the same bytes up to the leader's high watermark.
    const followerLog = f1.server!.broker!.replicaManager.partition('durable', 0)!.log;
    const hw = Number(onLeader.highWatermark);
    const leaderLog = leaderNode.server!.broker!.replicaManager.partition('durable', 0)!.log;
    assert.ok(followerLog.logEndOffset >= hw, `follower at ${followerLog.logEndOffset}, high watermark ${hw}`);
    assert.deepEqual(await followerLog.read(0, 1 << 20, hw, true), await leaderLog.read(0, 1 << 20, hw, true));
  } finally {
    client?.close();
    await cluster.close();
  }
});

// Follower fetching (KIP-392) in a 3-node cluster whose brokers are in racks a, b and c, with
// replica.selector.class=RackAwareReplicaSelector: over the wire, the leader answers a consumer in
// a follower's rack with that follower as preferredReadReplica and no records, and the follower
// serves the consumer up to its own high watermark; then confluent-kafka-python with client.rack
// and kafkajs with rackId read every partition, the ones led elsewhere from the replica in their rack.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Kafka, logLevel } from 'kafkajs';
import { startCluster, type ClusterHandle } from '../../src/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatchSync, iterateBatches } from '../../src/records/index.js';
import { runProcess, within } from './process-helpers.js';

const PYTHON = '/usr/bin/python3'; // Debian's packages are seen by the system python, not a pyenv one.
const RACKS: Record<number, string> = { 1: 'a', 2: 'b', 3: 'c' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let cluster: ClusterHandle;
let client: ClusterClient;

before(async () => {
  cluster = await within(60_000, 'startCluster', startCluster({
    nodes: 3,
    config: { 'replica.selector.class': 'org.apache.kafka.common.replica.RackAwareReplicaSelector' },
    nodeConfig: Object.fromEntries(Object.entries(RACKS).map(([id, rack]) => [Number(id), { 'broker.rack': rack }])),
  }));
  client = new ClusterClient({ bootstrap: cluster.bootstrap });
});

after(async () => {
  client?.close();
  await cluster?.close();
});

const node = (id: number) => cluster.nodes.find((n) => n.nodeId === id)!.server!.broker!;

async function createTopic(name: string, partitions: number) {
  const created = await client.admin(ApiKey.CreateTopics, {
    topics: [{ name, numPartitions: partitions, replicationFactor: 3, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false,
  }, 7);
  assert.equal(created.topics[0].errorCode, ErrorCode.NONE);
  return client.topic(name);
}

/** Until `check` holds (a cluster converging), or fail after `ms`. */
async function eventually(what: string, ms: number, check: () => boolean) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

const offsetsOf = (records: Buffer | null): number[] => records === null ? [] : [...iterateBatches(records)].flatMap((b) => Array.from({ length: b.lastOffset - b.baseOffset + 1 }, (_, i) => b.baseOffset + i));

test('Metadata shows each broker\'s rack', async () => {
  await client.metadata(null);
  assert.deepEqual([...client.brokers.values()].map((b) => [b.nodeId, b.rack]).sort(), [[1, 'a'], [2, 'b'], [3, 'c']]);
});

test('the leader names the follower in the consumer\'s rack; that follower serves the consumer up to its own high watermark', { timeout: 120_000 }, async () => {
  const info = await createTopic('rack-wire', 1);
  const p0 = info.partitions[0]!;
  const followerId = p0.replicas.find((id) => id !== p0.leader)!;
  const leaderConn = await client.leaderFor('rack-wire', 0);
  const records = buildRecordBatchSync({ records: Array.from({ length: 5 }, (_, i) => ({ key: null, value: Buffer.from(`v${i}`), timestamp: 1_700_000_000_000 + i })) });
  await within(20_000, 'produce', (async () => {
    for (;;) {
      const r = await leaderConn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 5_000, topicData: [{ name: 'rack-wire', partitionData: [{ index: 0, records }] }] });
      const code = r.responses[0].partitionResponses[0].errorCode;
      if (code === ErrorCode.NONE) return;
      assert.ok([ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_ENOUGH_REPLICAS].includes(code), `produce: ${code}`);
      await sleep(50);
    }
  })());
  // Every follower has the batch and the high watermark past it (they learn it on their next fetch).
  await eventually('followers at the high watermark', 20_000, () => p0.replicas.every((id) => (node(id).replicaManager.partition('rack-wire', 0)?.highWatermark ?? 0) >= 5));

  const consumerFetch = async (conn: typeof leaderConn, rackId: string, fetchOffset = 0) => {
    const r = await conn.send(ApiKey.Fetch, 12, {
      replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: 'rack-wire', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: BigInt(fetchOffset), lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
      forgottenTopicsData: [], rackId,
    });
    return r.responses[0].partitions[0];
  };
  const fromLeader = await consumerFetch(leaderConn, RACKS[followerId]!);
  assert.equal(fromLeader.errorCode, ErrorCode.NONE);
  assert.equal(fromLeader.preferredReadReplica, followerId);
  assert.deepEqual(offsetsOf(fromLeader.records), [], 'no records with a preferred read replica');
  const inLeaderRack = await consumerFetch(leaderConn, RACKS[p0.leader]!);
  assert.equal(inLeaderRack.preferredReadReplica, -1);
  assert.deepEqual(offsetsOf(inLeaderRack.records), [0, 1, 2, 3, 4]);

  // In a fetch session (KIP-227) an incremental fetch with nothing new still names the preferred
  // read replica (rackId is per request): the client has to learn it.
  const sessionFetch = (sessionId: number, sessionEpoch: number, rackId: string, topics: object[]) => leaderConn.send(ApiKey.Fetch, 12, {
    replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId, sessionEpoch, topics, forgottenTopicsData: [], rackId,
  });
  const full = await sessionFetch(0, 0, RACKS[p0.leader]!, [{ topic: 'rack-wire', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 5n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }]);
  assert.ok(full.sessionId > 0, 'a session was opened');
  assert.equal(full.responses[0].partitions[0].preferredReadReplica, -1);
  const incremental = await sessionFetch(full.sessionId, 1, RACKS[followerId]!, []);
  assert.deepEqual(incremental.responses.flatMap((t: any) => t.partitions.map((p: any) => [p.partitionIndex, p.preferredReadReplica])), [[0, followerId]]);

  const followerConn = await client.broker(followerId);
  const fromFollower = await consumerFetch(followerConn, RACKS[followerId]!);
  assert.equal(fromFollower.errorCode, ErrorCode.NONE);
  const followerHw = node(followerId).replicaManager.partition('rack-wire', 0)!.highWatermark;
  assert.equal(fromFollower.highWatermark, BigInt(followerHw), 'the follower answers with its own high watermark');
  for (const o of offsetsOf(fromFollower.records)) assert.ok(o < followerHw, `offset ${o} served at or past the follower's high watermark ${followerHw}`);
  assert.deepEqual(offsetsOf(fromFollower.records), [0, 1, 2, 3, 4]);
  assert.equal((await consumerFetch(followerConn, RACKS[followerId]!, 99)).errorCode, ErrorCode.OFFSET_OUT_OF_RANGE, 'past the follower\'s log end');
  // Fetch v10 carries no rack: a follower serves only v11+ consumers.
  const v10 = await followerConn.send(ApiKey.Fetch, 10, {
    replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
    topics: [{ topic: 'rack-wire', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
    forgottenTopicsData: [],
  });
  assert.equal(v10.responses[0].partitions[0].errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
});

const hasConfluent = spawnSync(PYTHON, ['-c', 'import confluent_kafka']).status === 0;
const skip = hasConfluent ? false : 'python3-confluent-kafka is not installed (apt-get install -y python3-confluent-kafka)';
if (!hasConfluent && process.env.CI) throw new Error('python3-confluent-kafka is missing in CI');

test('confluent-kafka-python with client.rack reads the partitions led elsewhere from the follower in its rack', { skip, timeout: 180_000 }, async () => {
  const partitions = 3;
  const count = 300;
  const info = await createTopic('rack-py', partitions);
  const rackBroker = 2;
  const ledElsewhere = info.partitions.filter((p) => p.leader !== rackBroker).map((p) => p.partition);
  assert.ok(ledElsewhere.length > 0, 'round-robin placement leads some partition on another broker');
  const { servedAsFollower, restore } = countServedAsFollower(rackBroker, 'rack-py');
  try {
    const r = await runProcess(PYTHON, ['test/broker/python/follower_fetch.py', cluster.bootstrap, 'rack-py', String(partitions), String(count), RACKS[rackBroker]!], null, 150_000);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { failed: string[]; seen: [number, number, string][] };
    assert.deepEqual(out.failed, []);
    assert.equal(out.seen.length, count, `${out.seen.length} of ${count} records read`);
    assert.equal(new Set(out.seen.map((s) => s[2])).size, count, 'no duplicates');
    for (const partition of ledElsewhere) {
      assert.ok((servedAsFollower.get(partition) ?? 0) > 0, `partition ${partition} (led by ${info.partitions[partition]!.leader}) was read from broker ${rackBroker}, its follower in rack ${RACKS[rackBroker]}`);
    }
  } finally {
    restore();
  }
});

test('kafkajs with rackId reads the partitions led elsewhere from the follower in its rack', { timeout: 180_000 }, async () => {
  const partitions = 3;
  const count = 300;
  const info = await createTopic('rack-js', partitions);
  const rackBroker = 3;
  const ledElsewhere = info.partitions.filter((p) => p.leader !== rackBroker).map((p) => p.partition);
  assert.ok(ledElsewhere.length > 0);
  const kafka = new Kafka({ clientId: 'rack-js', brokers: cluster.bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 100 } });
  const producer = kafka.producer({ idempotent: true });
  await producer.connect();
  await producer.send({ topic: 'rack-js', acks: -1, messages: Array.from({ length: count }, (_, i) => ({ partition: i % partitions, value: `v${i}` })) });
  await producer.disconnect();
  const { servedAsFollower, restore } = countServedAsFollower(rackBroker, 'rack-js');
  const consumer = kafka.consumer({ groupId: 'rack-js-group', rackId: RACKS[rackBroker]! });
  try {
    const seen = new Set<string>();
    await consumer.connect();
    await consumer.subscribe({ topic: 'rack-js', fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => { seen.add(message.value!.toString()); } });
    await within(60_000, 'kafkajs reads everything', (async () => { while (seen.size < count) await sleep(50); })());
    assert.equal(seen.size, count);
    for (const partition of ledElsewhere) {
      assert.ok((servedAsFollower.get(partition) ?? 0) > 0, `partition ${partition} (led by ${info.partitions[partition]!.leader}) was read from broker ${rackBroker}, its follower in rack ${RACKS[rackBroker]}`);
    }
  } finally {
    await consumer.disconnect();
    restore();
  }
});

/** Counts, on `brokerId`, the records it serves to consumers from partitions of `topic` it follows. */
function countServedAsFollower(brokerId: number, topic: string) {
  const rm = node(brokerId).replicaManager;
  const servedAsFollower = new Map<number, number>();
  const fetch = rm.fetch.bind(rm);
  rm.fetch = async (params) => {
    const out = await fetch(params);
    if ((params.replicaId ?? -1) < 0) {
      params.partitions.forEach((fp, i) => {
        const p = rm.partition(fp.topic, fp.partition);
        const n = offsetsOf(out[i]!.records).length;
        if (fp.topic === topic && p !== undefined && !p.isLeader && n > 0) servedAsFollower.set(fp.partition, (servedAsFollower.get(fp.partition) ?? 0) + n);
      });
    }
    return out;
  };
  return { servedAsFollower, restore: () => { rm.fetch = fetch; } };
}

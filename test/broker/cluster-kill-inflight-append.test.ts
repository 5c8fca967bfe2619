// An embedded cluster node killed while a leader's append to a compacted topic is still validating
// its keys (an await), then restarted in the same process: the append, resuming after the kill,
// must not write into the log the restarted node has opened on the same directory. Before the fix
// in src/storage it did, at the killed log's idea of the end: the restarted node's later batches
// were overwritten, and reads past them came back torn or empty for good (the queue checker's
// `__share_group_state` partition that never loaded, and followers stuck behind their leader).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster } from '../../src/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { buildRecordBatchSync, iterateBatches, readRecords } from '../../src/records/index.js';
import { partitionKey } from '../../src/util/index.js';
import { until, within } from './process-helpers.js';

const TOPIC = 'compacted';
type Cluster = Awaited<ReturnType<typeof startCluster>>;

const keyed = (prefix: string, n: number, valueBytes = 10): Buffer => buildRecordBatchSync({
  records: Array.from({ length: n }, (_, i) => ({ key: Buffer.from(`${prefix}-${i}`), value: Buffer.from(`${prefix}-${i}:`.padEnd(valueBytes, 'x')), timestamp: Date.now() })),
});

function replicas(cluster: Cluster) {
  const broker = cluster.nodes[0]!.server?.broker;
  assert.ok(broker, 'the node is running');
  return broker.replicaManager;
}

async function produce(cluster: Cluster, records: Buffer): Promise<{ errorCode: number; baseOffset: bigint }> {
  const r = await replicas(cluster).produce(-1, 10_000, [{ topic: TOPIC, partition: 0, records }]);
  return r.get(partitionKey(TOPIC, 0))!;
}

/** Every record of the partition as `offset:key`, each batch's CRC checked. */
async function readAll(cluster: Cluster): Promise<string[]> {
  const rm = replicas(cluster);
  const end = rm.partition(TOPIC, 0)!.highWatermark;
  const out: string[] = [];
  let next = 0;
  for (let reads = 0; next < end; reads++) {
    assert.ok(reads < 100, `reading stalled at offset ${next} below ${end}`);
    const [r] = await rm.fetch({ maxBytes: 1 << 20, isolationLevel: 0, maxWaitMs: 0, minBytes: 0, partitions: [{ topic: TOPIC, partition: 0, fetchOffset: BigInt(next), partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 }] });
    assert.equal(r!.errorCode, 0, `fetch at ${next}`);
    const before = next;
    for (const b of iterateBatches(r!.records ?? Buffer.alloc(0))) {
      assert.ok(b.verifyCrc(), `the batch at ${b.baseOffset} fails its CRC`);
      for (const x of await readRecords(b)) out.push(`${x.offset}:${x.key?.toString()}`);
      next = b.lastOffset + 1;
    }
    assert.ok(next > before, `no batch at offset ${next} below the high watermark ${end}`);
  }
  return out;
}

test('a node killed while a compacted append validates, then restarted: the resumed append writes nothing, and the log stays readable across more appends and a restart', { timeout: 120_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({ nodes: 1 }));
  const client = new ClusterClient({ bootstrap: cluster.bootstrap, clientId: 'inflight' });
  try {
    const created = await (await client.any()).send(ApiKey.CreateTopics, 5, {
      topics: [{ name: TOPIC, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [{ name: 'cleanup.policy', value: 'compact' }] }], timeoutMs: 30_000, validateOnly: false,
    });
    assert.equal(created.topics[0].errorCode, 0);
    await until(30_000, 'the partition led', async () => (replicas(cluster).partition(TOPIC, 0)?.isLeader ? true : undefined));
    assert.equal((await produce(cluster, keyed('a', 3))).errorCode, 0);

    // The next append is held between its validation and its write (where a compacted topic's key check awaits).
    const log = replicas(cluster).partition(TOPIC, 0)!.log;
    const append = log.appendAsLeader.bind(log);
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    log.appendAsLeader = async (...args: Parameters<typeof append>) => { await gate; return append(...args); };
    const late = produce(cluster, keyed('late', 4, 400));

    await cluster.nodes[0]!.kill();
    await cluster.nodes[0]!.restart();
    await until(30_000, 'the partition led again', async () => (replicas(cluster).partition(TOPIC, 0)?.isLeader ? true : undefined));
    assert.equal((await produce(cluster, keyed('b', 2))).errorCode, 0);
    release();
    const stale = await late;
    assert.notEqual(stale.errorCode, 0, 'the append that resumed after its node was killed was not written');
    assert.equal((await produce(cluster, keyed('c', 2))).errorCode, 0);

    const expected = ['0:a-0', '1:a-1', '2:a-2', '3:b-0', '4:b-1', '5:c-0', '6:c-1'];
    assert.deepEqual(await readAll(cluster), expected);
    // And so after a restart, which trusts a cleanly closed log without re-validating it.
    await cluster.nodes[0]!.kill();
    await cluster.nodes[0]!.restart();
    await until(30_000, 'the partition led after the second restart', async () => (replicas(cluster).partition(TOPIC, 0)?.isLeader && replicas(cluster).partition(TOPIC, 0)!.highWatermark === 7 ? true : undefined));
    assert.deepEqual(await readAll(cluster), expected);
  } finally {
    client.close();
    await cluster.close();
  }
});

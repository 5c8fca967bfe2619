// A follower whose disk crosses log.dir.min.free.bytes while its leader still has room: a 3-node
// cluster on in-memory file systems (RF 3, min.insync.replicas 2), node 3's "volume" the only small
// one. Below its floor node 3 stops fetching the clients' partition instead of running into ENOSPC
// and halting: it leaves the ISR, acks=all writes go on with the other two (more than node 3 had
// room for), and node 3 stays up. Once its volume grows it fetches again, catches up and rejoins the
// ISR; every acknowledged record is on the leader at the offset it was acknowledged with.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster } from '../../src/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatchSync } from '../../src/records/index.js';
import { MemoryFileSystem } from '../../src/storage/index.js';
import { consumeAll } from './log-reader.js';
import { until, within } from './process-helpers.js';

const MiB = 1 << 20;
const TOPIC = 'floor';
/** Records of 16 KiB, 4 per produce request. */
const RECORD_BYTES = 16 * 1024;

test('a follower below its free-space floor stops replicating clients\' partitions and leaves the ISR instead of filling its disk; it rejoins once space returns', { timeout: 180_000 }, async () => {
  const disks = new Map<number, MemoryFileSystem>();
  const cluster = await within(60_000, 'startCluster', startCluster({
    // Node 3's volume is 20 MiB from the start, 12 MiB above its 8 MiB floor once started (it holds
    // a few KiB then). Bounded from its first statfs: a volume that turned from unbounded to bounded
    // later would go uncounted until the next sample (a tick), and a fast producer could fill it.
    nodes: 3, fs: (id) => {
      const disk = new MemoryFileSystem();
      if (id === 3) disk.capacityBytes = 20 * MiB;
      return disks.set(id, disk).get(id)!;
    },
    config: {
      'min.insync.replicas': '2', 'replica.lag.time.max.ms': '2000', 'log.segment.bytes': String(4 * MiB), 'log.index.size.max.bytes': String(64 * 1024),
      'log.dir.min.free.bytes': String(8 * MiB), 'log.dir.free.bytes.alert.threshold': String(8 * MiB),
    },
  }));
  const client = new ClusterClient({ bootstrap: cluster.bootstrap, requestTimeoutMs: 10_000 });
  try {
    const created = await client.admin(ApiKey.CreateTopics, {
      topics: [{ name: TOPIC, numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [1, 2, 3] }], configs: [] }], timeoutMs: 10_000, validateOnly: false,
    }, 7);
    assert.equal(created.topics[0].errorCode, ErrorCode.NONE, created.topics[0].errorMessage);
    await until(30_000, 'the partition led by node 1 with all three in the ISR', async () => {
      const t = await client.topic(TOPIC);
      return t.partitions[0]!.leader === 1 && t.partitions[0]!.isr.length === 3 ? true : undefined;
    });
    const small = disks.get(3)!;
    assert.ok(small.usedBytes < 1 * MiB, `node 3 holds ${small.usedBytes} bytes before the produce`);

    const acked: { offset: number; value: string }[] = [];
    let seq = 0;
    const produce = async (): Promise<number> => {
      const values = Array.from({ length: 4 }, () => `v${seq++}:`);
      const records = buildRecordBatchSync({ records: values.map((v) => ({ key: null, value: Buffer.from(v.padEnd(RECORD_BYTES, 'x')), timestamp: Date.now() })) });
      const conn = await client.leaderFor(TOPIC, 0);
      const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records }] }] });
      const pr = r.responses[0].partitionResponses[0];
      if (pr.errorCode === ErrorCode.NONE) values.forEach((v, i) => acked.push({ offset: Number(pr.baseOffset) + i, value: v }));
      return pr.errorCode;
    };
    const node3 = cluster.nodes.find((n) => n.nodeId === 3)!;
    // 40 MiB at acks=all: twice what node 3 has left. Errors while the ISR shrinks are retried.
    const errors = new Map<number, number>();
    await within(120_000, 'producing 40 MiB', (async () => {
      while (acked.length * RECORD_BYTES < 40 * MiB) {
        const code = await produce();
        if (code !== ErrorCode.NONE) { errors.set(code, (errors.get(code) ?? 0) + 1); await new Promise((r) => setTimeout(r, 100)); }
      }
    })());
    assert.equal(node3.running, true, 'node 3 did not halt');
    assert.deepEqual(node3.server!.logDirs().map((d) => d.state), ['full']);
    // The floor is sampled before each replica fetch that could cross it: node 3 passes it by one
    // fetch (replica.fetch.max.bytes, 1 MiB) at most, plus the broker's own small writes.
    const left = small.capacityBytes - small.usedBytes;
    assert.ok(left > 8 * MiB - 2 * MiB, `node 3 stopped ${8 * MiB - left} bytes past its floor`);
    const shrunk = await client.topic(TOPIC);
    assert.deepEqual([...shrunk.partitions[0]!.isr].sort(), [1, 2], 'node 3 left the ISR');

    // Space returns on node 3: it fetches again and rejoins.
    small.capacityBytes += 64 * MiB;
    await until(90_000, 'node 3 back in the ISR', async () => ((await client.topic(TOPIC)).partitions[0]!.isr.length === 3 ? true : undefined), 200);
    assert.equal(await produce(), ErrorCode.NONE);

    // Every acknowledged record is on the leader at its offset.
    const stored = (await consumeAll(client, TOPIC, 0)).map((v) => v.slice(0, v.indexOf(':') + 1));
    const wrong = acked.filter((a) => stored[a.offset] !== a.value);
    assert.deepEqual(wrong.slice(0, 5), [], `${wrong.length} of ${acked.length} acknowledged records not at their offset`);
  } finally {
    client.close();
    await cluster.close();
  }
});

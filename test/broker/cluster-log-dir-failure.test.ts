// A broker loses its disk at peak load: a 3-node cluster on in-memory file systems (RF 3,
// min.insync.replicas 2), producers writing acks=all to every partition, and then every write
// into one broker's partition directories fails with EIO. That broker answers KAFKA_STORAGE_ERROR,
// and with its only log directory offline it halts, as Kafka's broker does; the controller fences
// it and elects new leaders from the ISR; writes continue there, and every acknowledged record is
// on the new leaders at the offset it was acknowledged with. With the disk replaced (faults
// cleared) the broker comes back and its replicas rejoin the ISR.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster } from '../../src/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatchSync } from '../../src/records/index.js';
import { MemoryFileSystem } from '../../src/storage/index.js';
import { consumeAll } from './log-reader.js';
import { within } from './process-helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TOPIC = 'disk';
const PARTITIONS = 3;

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  return within(ms, what, (async () => {
    for (;;) {
      const v = await Promise.resolve().then(probe).catch(() => undefined);
      if (v !== undefined) return v;
      await sleep(50);
    }
  })());
}

test('a broker whose log directory fails under acks=all load halts; leadership moves, writes continue, nothing acknowledged is lost', { timeout: 180_000 }, async () => {
  const disks = new Map<number, MemoryFileSystem>();
  const cluster = await within(60_000, 'startCluster', startCluster({
    nodes: 3, fs: (id) => disks.set(id, new MemoryFileSystem()).get(id)!,
    config: { 'broker.session.timeout.ms': '3000', 'min.insync.replicas': '2' },
  }));
  const client = new ClusterClient({ bootstrap: cluster.bootstrap, requestTimeoutMs: 10_000 });
  const acked: { partition: number; offset: number; value: string }[] = [];
  const errors = new Map<string, number>();
  let stop = false;
  let seq = 0;
  const producer = async (partition: number) => {
    while (!stop) {
      const value = `p${partition}-${seq++}`;
      try {
        const conn = await client.leaderFor(TOPIC, partition);
        const records = buildRecordBatchSync({ records: [{ key: null, value: Buffer.from(value), timestamp: Date.now() }] });
        const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 5_000, topicData: [{ name: TOPIC, partitionData: [{ index: partition, records }] }] });
        const pr = r.responses[0].partitionResponses[0];
        if (pr.errorCode === ErrorCode.NONE) acked.push({ partition, offset: Number(pr.baseOffset), value });
        else {
          errors.set(String(pr.errorCode), (errors.get(String(pr.errorCode)) ?? 0) + 1);
          await sleep(50);
        }
      } catch (e) {
        errors.set((e as Error).name, (errors.get((e as Error).name) ?? 0) + 1);
        await sleep(50);
      }
    }
  };
  let producers: Promise<void>[] = [];
  try {
    const created = await client.admin(ApiKey.CreateTopics, {
      topics: [{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 3, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false,
    }, 7);
    assert.equal(created.topics[0].errorCode, ErrorCode.NONE);
    const before = await client.topic(TOPIC);
    producers = Array.from({ length: PARTITIONS }, (_, p) => producer(p));
    await until('acknowledged writes to every partition', 30_000, () =>
      Array.from({ length: PARTITIONS }, (_, p) => acked.filter((a) => a.partition === p).length).every((n) => n >= 10) ? true : undefined);

    // The broker that loses its disk: one leading a partition, not the metadata leader.
    const controller = cluster.leaderId();
    const victimId = before.partitions.map((p) => p.leader).find((id) => id !== controller)!;
    const victim = cluster.nodes.find((n) => n.nodeId === victimId)!;
    const led = before.partitions.filter((p) => p.leader === victimId).map((p) => p.partition);
    const victimConn = await client.broker(victimId);
    const ackedBefore = acked.length;
    disks.get(victimId)!.inject({ op: 'write', code: 'EIO', path: new RegExp(`/${TOPIC}-\\d+/`), repeat: true });

    // The next write to a partition it leads fails on the disk: KAFKA_STORAGE_ERROR.
    const records = buildRecordBatchSync({ records: [{ key: null, value: Buffer.from('doomed'), timestamp: Date.now() }] });
    const failed = await victimConn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 5_000, topicData: [{ name: TOPIC, partitionData: [{ index: led[0]!, records }] }] })
      .then((r: any) => r.responses[0].partitionResponses[0].errorCode as number, () => 'connection closed');
    assert.ok(failed === ErrorCode.KAFKA_STORAGE_ERROR || failed === 'connection closed', `produce to the failed disk: ${failed}`);

    await until('the broker halted', 30_000, () => (victim.running ? undefined : true));
    await until('leaderships moved off the broker', 60_000, async () => {
      const t = await client.topic(TOPIC);
      return t.partitions.every((p) => p.leader >= 0 && p.leader !== victimId && !p.isr.includes(victimId)) ? true : undefined;
    });
    const ackedAtMove = acked.length;
    await until('acknowledged writes on the new leaders', 60_000, () =>
      Array.from({ length: PARTITIONS }, (_, p) => acked.slice(ackedAtMove).filter((a) => a.partition === p).length).every((n) => n >= 10) ? true : undefined);
    stop = true;
    await Promise.all(producers);
    assert.ok(ackedAtMove > ackedBefore || acked.length > ackedAtMove, 'writes continued');

    // Every acknowledged record is on the current leader at the offset it was acknowledged with.
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const stored = await consumeAll(client, TOPIC, partition);
      for (const a of acked.filter((x) => x.partition === partition)) {
        assert.equal(stored[a.offset], a.value, `${TOPIC}-${partition}: acknowledged ${a.value} at offset ${a.offset}`);
      }
    }

    // A new disk: the broker restarts and its replicas rejoin every ISR.
    disks.get(victimId)!.clearFaults();
    await victim.restart();
    await until('the restarted broker back in every ISR', 60_000, async () => {
      const t = await client.topic(TOPIC);
      return t.partitions.every((p) => p.isr.includes(victimId)) ? true : undefined;
    });
  } finally {
    stop = true;
    await Promise.all(producers);
    client.close();
    await cluster.close();
  }
});

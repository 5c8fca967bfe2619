// A queue checker for share groups (KIP-932) over a 3-node cluster (RF 3, min.insync.replicas 2)
// whose brokers are killed and restarted one at a time while an idempotent producer writes and
// three share consumers (src/cli/share-consumer.ts) work two partitions. Each delivery and each
// acknowledgement a leader confirmed is logged; then, against the log as the replicas end up with it:
//   - every share-partition ends done: its start offset reaches the log end (each record accepted
//     or archived), and every record in the log was delivered at its offset;
//   - no record's delivery is handed out twice (its delivery counts only ever grow), so no two
//     consumers hold one record at once;
//   - a record whose accept a leader confirmed is never delivered again, and accepted at most once;
//   - a record that is always released is archived at share.delivery.count.limit, never accepted.
// A failure prints the log of the record it is about.
// And replication's part: every record the producer was told was written (its partition's answer,
// acks=all) is in the log at that offset, once, and every delivery is of the record the log holds
// at its offset. Followers that stop catching up with their leader fail it as a replication failure
// (seen before the fix in src/storage: a killed node's append, resumed after its log closed, wrote
// over the log the restarted node had opened; followers could not append the leader's torn batch,
// no `__share_group_state` write reached min.insync.replicas, and the share group stalled), with
// each replica's fetch state for the partition. A stall or an unfinished run writes the brokers'
// log to a file, and with SHARE_CHECKER_LOG_DIR set keeps the nodes' data directories there too.
// SHARE_CHECKER_RECORDS and SHARE_CHECKER_KILLS raise the load.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import { startCluster } from '../../src/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { iterateBatches, readRecords } from '../../src/records/index.js';
import { ACCEPT, RELEASE, ShareConsumer } from '../../src/cli/share-consumer.js';
import { until, within } from './process-helpers.js';
import { createLogger } from '../../src/util/index.js';
import { cpSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';

const TOPIC = 'queue';
const GROUP = 'checkers';
const RECORDS = Number(process.env.SHARE_CHECKER_RECORDS ?? 300);
const KILLS = Number(process.env.SHARE_CHECKER_KILLS ?? 2);
/** Followers behind their leader by the same offsets this long: replication has stopped. */
const STUCK_MS = 30_000;
const LIMIT = 4;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CONFIG = {
  'share.coordinator.state.topic.num.partitions': '3', 'share.coordinator.state.topic.replication.factor': '3', 'offsets.topic.num.partitions': '3',
  'group.share.record.lock.duration.ms': '5000', 'group.share.heartbeat.interval.ms': '500', 'group.share.min.heartbeat.interval.ms': '100',
  'group.share.session.timeout.ms': '45000', 'min.insync.replicas': '2', 'group.share.delivery.count.limit': String(LIMIT),
};

interface Delivery { consumer: number; partition: number; offset: number; value: string; deliveryCount: number; atMs: number }

type Cluster = Awaited<ReturnType<typeof startCluster>>;

/** The brokers' log lines (INFO and up), the last LOG_LINES of them, written to a file when a run stalls. */
const LOG_LINES = 50_000;
function ringLogger(): { logger: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const push = (line: string) => { lines.push(line); if (lines.length > LOG_LINES) lines.splice(0, lines.length - LOG_LINES); };
  return { logger: createLogger({ level: 'INFO', writeError: push, writeOther: push }), lines };
}

/**
 * Every running replica's view of a partition: role, epochs, log and high watermark, the leader's
 * ISR and each follower's progress, a follower's fetch state (its fetcher's offset, epoch, last
 * error), and the partition's registration in that node's metadata image.
 */
function replicaStates(cluster: Cluster, topic: string, index: number): string[] {
  const now = Date.now();
  return cluster.nodes.filter((n) => n.server?.broker).map((n) => {
    const broker = n.server!.broker!;
    const p = broker.replicaManager.partition(topic, index);
    const image = n.server!.metadata?.image;
    const reg = image?.topics.getTopic(topic)?.partitions.get(index);
    const own = image?.cluster.broker(n.nodeId);
    const md = `image: leader=${reg?.leader} leaderEpoch=${reg?.leaderEpoch} partitionEpoch=${reg?.partitionEpoch} isr=${reg?.isr} replicas=${reg?.replicas}; own registration epoch=${own?.epoch} fenced=${own?.fenced}, lifecycle epoch=${broker.lifecycle?.brokerEpoch}`;
    if (p === undefined) return `n${n.nodeId}: no partition; ${md}`;
    const log = p.log;
    const epochs = [p.leaderEpoch, p.leaderEpoch - 1, p.leaderEpoch - 2, p.leaderEpoch - 3].filter((e) => e >= 0).map((e) => { const x = log.endOffsetForEpoch(e); return `${e}:${x ? `${x.leaderEpoch}@${x.endOffset}` : '-'}`; }).join(',');
    const role = p.isLeader
      ? `L isr=${p.isr} pending=${p.pendingIsrChange ? `${p.pendingIsrChange.kind}:${p.pendingIsrChange.proposedIsr}` : '-'} epochStart=${p.leaderEpochStartOffset} followers=[${[...p.followers.values()].map((f) => `${f.brokerId}: leo=${f.logEndOffset} caughtUp=${now - f.lastCaughtUpTimeMs}ms ago fetched=${now - f.lastFetchTimeMs}ms ago brokerEpoch=${f.brokerEpoch}`).join('; ')}]`
      : `F of ${p.leaderId} (${broker.replicaFetchers.describe(p)})`;
    return `n${n.nodeId}: ${role} leaderEpoch=${p.leaderEpoch} partitionEpoch=${p.partitionEpoch} logStart=${log.logStartOffset} leo=${log.logEndOffset} hw=${p.highWatermark} latestEpoch=${log.latestEpoch} epochEnds=${epochs}; ${md}`;
  });
}

/** The partition's records below `end` as its leader `nodeId` has them: `partition:offset` → value (control batches left out). */
async function logOf(cluster: Cluster, nodeId: number, partition: number, end: number): Promise<Map<string, string>> {
  const broker = cluster.nodes.find((n) => n.nodeId === nodeId)?.server?.broker;
  assert.ok(broker, `node ${nodeId}, the leader of ${TOPIC}-${partition}, is not running`);
  const replicas = broker.replicaManager;
  const out = new Map<string, string>();
  let next = 0;
  for (let reads = 0; next < end; reads++) {
    assert.ok(reads < 10_000, `reading ${TOPIC}-${partition} stalled at offset ${next}`);
    const at: number = next;
    const [r] = await replicas.fetch({ maxBytes: 1 << 20, isolationLevel: 0, maxWaitMs: 0, minBytes: 0, partitions: [{ topic: TOPIC, partition, fetchOffset: BigInt(at), partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 }] });
    if (r?.errorCode !== 0) assert.fail(`reading ${TOPIC}-${partition} at ${at} from node ${nodeId}: error ${r?.errorCode}`);
    const before = next;
    for (const b of iterateBatches(r!.records ?? Buffer.alloc(0))) {
      if (!b.isControl) for (const x of await readRecords(b)) if (x.offset < end) out.set(`${partition}:${x.offset}`, x.value?.toString() ?? '');
      next = Math.max(next, b.lastOffset + 1);
    }
    assert.ok(next > before, `no records at ${TOPIC}-${partition} offset ${next} below ${end}`);
  }
  return out;
}

test('queue checker: brokers killed one at a time under three share consumers; each record accepted once or archived, no delivery handed out twice, confirmed accepts never redelivered', { timeout: 300_000 }, async (t) => {
  const phases: [string, number][] = [['start', performance.now()]];
  const restarts: number[] = [];
  const timings: string[] = [];
  const brokerLog = ringLogger();
  const cluster = await within(60_000, 'startCluster', startCluster({ nodes: 3, config: CONFIG, logger: brokerLog.logger }));
  phases.push(['load and kills', performance.now()]);
  const client = new ClusterClient({ bootstrap: cluster.bootstrap, clientId: 'queue-checker' });
  const deliveries: Delivery[] = [];
  /** Each record as its partition's answer placed it. */
  const acknowledged: { partition: number; offset: number; value: string }[] = [];
  const accepted: { partition: number; offset: number; atMs: number }[] = [];
  let loops: Promise<void>[] = [];
  const log = new Map<string, string>();
  let stuck: string | null = null;
  /** A run that stalled or did not finish keeps its nodes' data directories when SHARE_CHECKER_LOG_DIR is set. */
  let keepData = false;
  let stop = false;
  try {
    const c = await client.any();
    const created = await c.send(ApiKey.CreateTopics, 5, { topics: [{ name: TOPIC, numPartitions: 2, replicationFactor: 3, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false });
    assert.equal(created.topics[0].errorCode, 0);
    await until(30_000, 'leaders', async () => ((await client.metadata([TOPIC]))[0]!.partitions.every((p) => p.leader > 0) ? true : undefined));
    const set = await c.send(ApiKey.IncrementalAlterConfigs, 1, { resources: [{ resourceType: 32, resourceName: GROUP, configs: [{ name: 'share.auto.offset.reset', configOperation: 0, value: 'earliest' }] }], validateOnly: false });
    assert.equal(set.responses[0].errorCode, 0);

    // Three consumers, each with its own connections, working until told to stop.
    loops = [0, 1, 2].map(async (i) => {
      const own = new ClusterClient({ bootstrap: cluster.bootstrap, clientId: `worker-${i}` });
      const consumer = new ShareConsumer(own, GROUP, [TOPIC]);
      consumer.onAcknowledged = (_topic, partition, acks) => {
        for (const a of acks) if (a.type === ACCEPT) accepted.push({ partition, offset: a.offset, atMs: performance.now() });
      };
      try {
        await consumer.subscribe(60_000);
        while (!stop) {
          const records = await consumer.poll(300).catch(() => []);
          for (const r of records) {
            const value = r.value?.toString() ?? '';
            deliveries.push({ consumer: i, partition: r.partition, offset: r.offset, value, deliveryCount: r.deliveryCount, atMs: performance.now() });
            consumer.acknowledge(r, value.startsWith('poison') ? RELEASE : ACCEPT);
          }
          if (records.length === 0) await sleep(50);
        }
      } finally {
        await consumer.close().catch(() => undefined);
        own.close();
      }
    });

    // The producer (idempotent: a retry after a leader change is not a second record) and the killer.
    const kafka = new Kafka({ clientId: 'queue-producer', brokers: cluster.bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 30, initialRetryTime: 200, maxRetryTime: 2000 } });
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    // One send() per partition: kafkajs (2.2.4) retrying a send() that spans two leaders skips a
    // partition whose new leader already answered for the other one (send() resolves with that batch
    // unwritten) and takes back its sequence numbers, so the partition's next batch can be answered as
    // a duplicate of it. Only the answer for a partition says its records were written, and where.
    const producing = (async () => {
      for (let i = 0; i < RECORDS; i += 5) {
        const values = Array.from({ length: 5 }, (_, j) => (i + j) % 60 === 7 ? `poison-${i + j}` : `r-${i + j}`);
        for (const partition of [0, 1]) {
          const messages = values.map((value, j) => ({ value, partition: (i + j) % 2 })).filter((m) => m.partition === partition);
          const answers = await producer.send({ topic: TOPIC, acks: -1, messages });
          const md = answers.find((a) => a.topicName === TOPIC && a.partition === partition);
          assert.ok(md !== undefined && md.errorCode === 0, `send to partition ${partition} answered ${JSON.stringify(answers)}`);
          messages.forEach((m, k) => acknowledged.push({ partition, offset: Number(md.baseOffset) + k, value: m.value }));
        }
        await sleep(60);
      }
    })();
    const killing = (async () => {
      for (let k = 0; k < KILLS; k++) {
        await sleep(4000);
        // The leader of one of the topic's partitions: its share-partition moves with it.
        const leader = (await client.metadata([TOPIC]).catch(() => []))[0]?.partitions[k % 2]?.leader ?? k + 1;
        const node = cluster.nodes.find((n) => n.nodeId === leader && n.running) ?? cluster.nodes[k]!;
        const at = performance.now();
        await node.kill();
        await sleep(3000);
        await node.restart();
        restarts.push(performance.now() - at - 3000);
      }
    })();
    const [produced] = await Promise.all([producing.then(() => performance.now()), killing]);
    timings.push(`producer done ${((produced - phases[1]![1]) / 1000).toFixed(1)} s into the load, kill and restart ${restarts.map((ms) => (ms / 1000).toFixed(1)).join(', ')} s`);
    await producer.disconnect();
    phases.push(['until done', performance.now()]);

    // Done when every share-partition's start offset reached its log end.
    let seen: unknown = null;
    const behindSince = { signature: '', atMs: 0 };
    const ends = async () => {
      const coordinatorId = (await (await client.any()).send(ApiKey.FindCoordinator, 4, { key: '', keyType: 0, coordinatorKeys: [GROUP] })).coordinators[0].nodeId;
      const coordinator = await client.broker(coordinatorId);
      const r = await coordinator.send(ApiKey.DescribeShareGroupOffsets, 0, { groups: [{ groupId: GROUP, topics: [{ topicName: TOPIC, partitions: [0, 1] }] }] });
      const offsets = r.groups[0].topics[0].partitions.map((p: any) => Number(p.startOffset));
      const hw = (await client.metadata([TOPIC]))[0]!.partitions.length === 2 ? await Promise.all([0, 1].map(async (p) => {
        const leader = await client.leaderFor(TOPIC, p);
        const l = await leader.send(ApiKey.ListOffsets, 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: TOPIC, partitions: [{ partitionIndex: p, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] }] });
        return Number(l.topics[0].partitions[0].offset);
      })) : [];
      const held = cluster.nodes.filter((n) => n.server?.broker).map((n) => ({ node: n.nodeId, stats: n.server!.broker!.share.manager.partitionStats(() => null) }));
      const desc = await coordinator.send(ApiKey.ShareGroupDescribe, 1, { groupIds: [GROUP], includeAuthorizedOperations: false });
      const members = desc.groups[0].members.map((m: any) => [m.memberId.slice(0, 6), m.memberEpoch, m.assignment.topicPartitions.map((x: any) => x.partitions.join(','))]);
      const leaders = (await client.metadata([TOPIC]))[0]!.partitions.map((p) => p.leader);
      const replicas = cluster.nodes.filter((n) => n.server?.broker).map((n) => [0, 1].map((i) => {
        const p = n.server!.broker!.replicaManager.partition(TOPIC, i);
        return p ? `n${n.nodeId}p${i}:${p.isLeader ? 'L' : 'F'} leo=${p.log.logEndOffset} hw=${p.highWatermark} isr=${p.isr}` : `n${n.nodeId}p${i}:-`;
      }).join(' '));
      // The share coordinators' view of each share-partition's state, and the state topic's replicas.
      const topicId = (await client.metadata([TOPIC]))[0]!.topicId;
      const state = await Promise.all(cluster.nodes.filter((n) => n.server?.broker).map(async (n) => `n${n.nodeId}: ` + (await Promise.all([0, 1].map(async (i) => {
        const r = await n.server!.broker!.share.coordinator.read({ groupId: GROUP, topicId, partition: i }, -1);
        return `p${i} ${r.errorCode === 0 ? `start=${r.startOffset} epoch=${r.stateEpoch}/${r.leaderEpoch}` : `error ${r.errorCode}`}`;
      }))).join(' ')));
      const stateReplicas = cluster.nodes.filter((n) => n.server?.broker).map((n) => [0, 1, 2].map((i) => {
        const p = n.server!.broker!.replicaManager.partition('__share_group_state', i);
        return p ? `n${n.nodeId}s${i}:${p.isLeader ? 'L' : 'F'} leo=${p.log.logEndOffset} hw=${p.highWatermark}` : `n${n.nodeId}s${i}:-`;
      }).join(' '));
      const errors = r.groups[0].topics[0].partitions.map((p: any) => p.errorCode);
      // Followers of the topic or of the share state topic not catching up with their leader (the
      // same behind-by for STUCK_MS): replication stopped, and with it the share-partitions' state
      // writes (min.insync.replicas 2), so the share group cannot finish.
      const behind: string[] = [];
      const behindPartitions: [string, number][] = [];
      for (const [topic, count] of [[TOPIC, 2], ['__share_group_state', 3]] as const) {
        for (let i = 0; i < count; i++) {
          const copies = cluster.nodes.filter((n) => n.server?.broker).map((n) => ({ node: n.nodeId, p: n.server!.broker!.replicaManager.partition(topic, i) })).filter((x) => x.p !== undefined);
          const leader = copies.find((x) => x.p!.isLeader);
          if (!leader) continue;
          for (const x of copies) if (x.p!.log.logEndOffset < leader.p!.log.logEndOffset) behind.push(`${topic}-${i}: n${x.node} at ${x.p!.log.logEndOffset}, leader n${leader.node} at ${leader.p!.log.logEndOffset}`);
          if (copies.some((x) => x.p!.log.logEndOffset < leader.p!.log.logEndOffset)) behindPartitions.push([topic, i]);
        }
      }
      const signature = behind.join('; ');
      if (signature === '' || signature !== behindSince.signature) Object.assign(behindSince, { signature, atMs: performance.now() });
      else if (performance.now() - behindSince.atMs >= STUCK_MS) {
        const states = behindPartitions.map(([topic, i]) => `${topic}-${i}:\n  ${replicaStates(cluster, topic, i).join('\n  ')}`).join('\n');
        return { stuck: `${signature}\n${states}\n`, offsets, hw, leaders };
      }
      seen = { replicas, leaders, held, members, offsets, errors, state, stateReplicas, hw, deliveries: deliveries.length, accepted: accepted.length, lastDeliveryAgoMs: performance.now() - (deliveries.at(-1)?.atMs ?? 0) };
      // A new leader's high watermark can lag its log for a moment: done is every share-partition's
      // start offset at a high watermark every replica has reached.
      const settled = [0, 1].every((i) => cluster.nodes.filter((n) => n.server?.broker).every((n) => {
        const p = n.server!.broker!.replicaManager.partition(TOPIC, i);
        return p === undefined || p.log.logEndOffset === hw[i];
      }));
      return offsets.length === 2 && settled && offsets.every((o: number, i: number) => o === hw[i]) ? { stuck: null, offsets, hw, leaders } : undefined;
    };
    const done = await until(120_000, 'every share-partition done', () => ends().catch((e) => { seen = String(e); return undefined; }), 500)
      .catch((e) => {
        keepData = true;
        const file = nodePath.join(process.env.SHARE_CHECKER_LOG_DIR ?? tmpdir(), `share-checker-unfinished-${process.pid}-${Date.now()}.log`);
        writeFileSync(file, `${JSON.stringify(seen)}\n\n${brokerLog.lines.join('\n')}\n`);
        throw new Error(`${e instanceof Error ? e.message : String(e)}; last seen ${JSON.stringify(seen)}; the brokers' log: ${file}`);
      });
    stuck = done.stuck === null ? null : `${done.stuck}; last seen ${JSON.stringify(seen)}`;
    keepData = stuck !== null;
    if (stuck === null) for (const i of [0, 1]) for (const [k, v] of await logOf(cluster, done.leaders[i]!, i, done.hw[i]!)) log.set(k, v);
  } finally {
    phases.push(['close', performance.now()]);
    stop = true;
    await within(30_000, 'the consumers to close', Promise.all(loops)).catch(() => undefined);
    client.close();
    const dir = process.env.SHARE_CHECKER_LOG_DIR;
    if (keepData && dir !== undefined) {
      for (const n of cluster.nodes) await n.kill().catch(() => undefined);
      for (const n of cluster.nodes) cpSync(n.dataDir, nodePath.join(dir, `share-checker-data-${process.pid}`, nodePath.basename(n.dataDir)), { recursive: true });
    }
    await cluster.close();
    phases.push(['', performance.now()]);
  }

  if (stuck !== null) {
    const file = nodePath.join(process.env.SHARE_CHECKER_LOG_DIR ?? tmpdir(), `share-checker-stall-${process.pid}-${Date.now()}.log`);
    writeFileSync(file, `${stuck}\n\n${brokerLog.lines.join('\n')}\n`);
    assert.fail(`replication failure (the share group could not finish, so nothing of it was checked): followers stopped catching up with their leaders for ${STUCK_MS / 1000} s: ${stuck}; the brokers' log: ${file}`);
  }
  const redelivered = deliveries.filter((d) => d.deliveryCount > 1 && !d.value.startsWith('poison')).length;
  t.diagnostic(`${RECORDS} records, ${KILLS} kills; ${phases.slice(0, -1).map(([name, at], i) => `${name} ${((phases[i + 1]![1] - at) / 1000).toFixed(1)} s`).join(', ')}; ${timings.join('')}`);
  t.diagnostic(`${deliveries.length} deliveries, ${accepted.length} confirmed accepts, ${redelivered} redeliveries of records that were not poison, ${log.size} records in the log`);

  // What the producer was told: every record acknowledged (acks=all), each in the log at its offset, once.
  assert.equal(acknowledged.length, RECORDS, 'every record sent was acknowledged');
  const lost = acknowledged.filter((w) => log.get(`${w.partition}:${w.offset}`) !== w.value)
    .map((w) => `${w.value} acknowledged at ${w.partition}:${w.offset}, the log holds ${log.get(`${w.partition}:${w.offset}`) ?? 'nothing'} there`);
  assert.deepEqual(lost.slice(0, 10), [], `${lost.length} acknowledged record(s) not in the log at their offsets`);
  assert.equal(log.size, RECORDS, 'the log holds exactly the records sent');
  // A share consumer reads below the high watermark, which no replica gives back: every delivery is of the record the log holds there.
  const moved = deliveries.filter((d) => log.get(`${d.partition}:${d.offset}`) !== d.value);
  assert.deepEqual(moved.slice(0, 10).map((d) => `${d.value}@${d.partition}:${d.offset}`), [], 'deliveries of a record the log does not hold at that offset');

  const byRecord = new Map<string, Delivery[]>();
  for (const d of deliveries) byRecord.set(`${d.partition}:${d.offset}`, [...byRecord.get(`${d.partition}:${d.offset}`) ?? [], d]);
  const show = (k: string) => JSON.stringify({ log: log.get(k), deliveries: byRecord.get(k), accepts: accepted.filter((a) => `${a.partition}:${a.offset}` === k) });
  const undelivered = [...log.keys()].filter((k) => !byRecord.has(k));
  assert.deepEqual(undelivered, [], `records in the log never delivered: ${undelivered.slice(0, 5).map(show).join(' ')}`);
  for (const [k, ds] of byRecord) {
    const counts = ds.map((d) => d.deliveryCount);
    assert.ok(counts.every((n, i) => i === 0 || n > counts[i - 1]!), `${k}: a delivery handed out twice, or counts going back: ${show(k)}`);
    const accepts = accepted.filter((a) => `${a.partition}:${a.offset}` === k);
    assert.ok(accepts.length <= 1, `${k}: accepted more than once: ${show(k)}`);
    if (accepts.length === 1) assert.ok(ds.every((d) => d.atMs < accepts[0]!.atMs), `${k}: delivered again after a confirmed accept: ${show(k)}`);
    if (ds[0]!.value.startsWith('poison')) {
      assert.equal(accepts.length, 0, `${k}: a released record accepted`);
      assert.ok(Math.max(...counts) <= LIMIT, `${k}: delivered past the limit: ${show(k)}`);
    }
  }
});

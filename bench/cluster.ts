// bench/cluster: replicated partitions as users feel them, on three `logline server` processes on
// this machine (each a broker and a metadata-quorum voter), with the single-node figure measured in
// the same run for the ratio. One JSON object on stdout, progress on stderr.
//
//   npm run bench:cluster [-- --quick] [-- --only throughput,latency,failover,shutdown,catchUp]
//
// 1. throughput: 1 KiB records, 12 partitions, one `logline bench produce` producer: one node
//    acks=1; three nodes RF 3 (min.insync.replicas 2) acks=1 and acks=all.
// 2. latency: `logline bench e2e` at a fixed 20 MB/s (acks=all, then acks=1) after a 10 s warm-up
//    at that rate: produce latency from each record's due time, end-to-end latency to a consumer
//    reading up to the high watermark.
// 3. failover: kill -9 of a partition's leader (not the active controller, so the metadata quorum
//    keeps its leader) until an acks=all write to that partition succeeds on its new leader;
//    Kafka's default broker.session.timeout.ms / broker.heartbeat.interval.ms, then tuned ones.
// 4. shutdown: SIGTERM of a leader until the active controller's Metadata names other leaders for
//    all its partitions (controlled shutdown), and until the process exits.
// 5. catchUp: a follower is killed, a backlog written with acks=1, the follower restarted; from the
//    restart until it is back in the ISR of every partition: bytes of backlog per second.
//
// Bounded by LOGLINE_BENCH_BUDGET_S (default 900 s); kills only the processes it started (by PID).
import { readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { ApiKey, ErrorCode, ZERO_UUID } from '../src/protocol/index.js';
import { buildRecordBatchSync } from '../src/records/index.js';
import { bench, BenchRun, Connections, createTopic, machine, pick, round, sleep, stats, steadyLeader, until } from './cluster-tools.js';
import { ServerProcesses, type ServerProcess } from './server-processes.js';
import { settleDirtyPages } from './settle.js';

const SCENARIOS = ['throughput', 'latency', 'failover', 'shutdown', 'catchUp'] as const;
const quick = process.argv.includes('--quick');
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt >= 0 ? (process.argv[onlyAt + 1] ?? '').split(',') : null;
if (only) for (const o of only) if (!(SCENARIOS as readonly string[]).includes(o)) throw new Error(`--only: unknown scenario ${o} (${SCENARIOS.join(', ')})`);
const runs = (s: typeof SCENARIOS[number]): boolean => only === null || only.includes(s);

/** Sizes of a full run and of a --quick one (a smoke run: every path, tiny amounts). */
const size = quick
  ? { records: 20_000, latencySeconds: 3, warmupSeconds: 1, repetitions: 1, backlogRecords: 20_000 }
  : { records: 1_000_000, latencySeconds: 30, warmupSeconds: 10, repetitions: 3, backlogRecords: 500_000 };
const PARTITIONS = 12;
const RECORD_BYTES = 1024;
const LATENCY_RECORDS_PER_SEC = Math.round(20e6 / RECORD_BYTES);
const REPLICATED = { 'min.insync.replicas': '2' };
/** Session 750 ms, heartbeats every 150 ms: a dead broker is fenced within a second. */
const TUNED = { 'broker.session.timeout.ms': '750', 'broker.heartbeat.interval.ms': '150' };

const benchRun = new BenchRun('cluster', 900);
const say = (m: string): void => benchRun.say(m);
const withNodes = benchRun.withNodes.bind(benchRun);

/** User + system CPU seconds of a live process (Linux: /proc/<pid>/stat, USER_HZ 100). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** `fn`'s result with each live node's CPU over it (% of one core). */
async function withCpu<T extends object>(procs: ServerProcesses, fn: () => Promise<T>): Promise<T & { nodeCpuPercent: Record<string, number> }> {
  const nodes = procs.live.map((n) => ({ id: n.id, pid: n.child!.pid! }));
  const before = nodes.map((n) => cpuSeconds(n.pid));
  const t0 = performance.now();
  const value = await fn();
  const seconds = (performance.now() - t0) / 1000;
  const nodeCpuPercent = Object.fromEntries(nodes.map((n, i) => [`node${n.id}`, round((cpuSeconds(n.pid) - before[i]!) / seconds * 100)]));
  return { ...value, nodeCpuPercent };
}

interface PartitionView { partition: number; leader: number; isr: number[] }
interface TopicView { brokers: number[]; partitions: PartitionView[] }

/** The topic as the node on `port` sees it (undefined: no answer, or the topic unknown there). */
async function topicView(conns: Connections, port: number, topic: string): Promise<TopicView | undefined> {
  const r = await conns.send<any>(port, ApiKey.Metadata, 12, { topics: [{ name: topic, topicId: ZERO_UUID }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  const t = r?.topics?.[0];
  if (t === undefined || t.errorCode !== 0) return undefined;
  return {
    brokers: r.brokers.map((b: { nodeId: number }) => b.nodeId),
    partitions: t.partitions.map((p: any) => ({ partition: p.partitionIndex, leader: p.leaderId, isr: p.isrNodes })).sort((a: PartitionView, b: PartitionView) => a.partition - b.partition),
  };
}

/** Creates a 12-partition RF 3 topic with min.insync.replicas 2 and waits until every live node sees it led, with a full ISR. */
async function createReplicated(procs: ServerProcesses, conns: Connections, name: string): Promise<void> {
  const configs = Object.entries(REPLICATED).map(([n, value]) => ({ name: n, value }));
  const port = procs.live[0]!.brokerPort;
  await until(`create ${name}`, async () => {
    const r = await conns.send<any>(port, ApiKey.CreateTopics, 7, { topics: [{ ...createTopic(name, PARTITIONS, procs.nodes.length), configs }], timeoutMs: 10_000, validateOnly: false });
    const code = r?.topics?.[0]?.errorCode;
    return code === 0 || code === ErrorCode.TOPIC_ALREADY_EXISTS ? true : undefined;
  }, 50, 30_000);
  await fullyReplicated(procs, conns, name);
}

/** Until every live node lists every partition of `topic` with a leader and every replica in its ISR. */
async function fullyReplicated(procs: ServerProcesses, conns: Connections, topic: string, timeoutMs = 120_000): Promise<void> {
  await until(`${topic} fully replicated`, async () => {
    const views = await Promise.all(procs.live.map((n) => topicView(conns, n.brokerPort, topic)));
    return views.every((v) => v !== undefined && v.partitions.length === PARTITIONS && v.partitions.every((p) => p.leader >= 0 && p.isr.length === procs.nodes.length)) ? true : undefined;
  }, 50, timeoutMs);
}

/**
 * Deletes a topic and waits until every node has moved its partitions aside and removed them, and
 * the disk is quiet again: a deletion's file closes and writeback would otherwise land in the next
 * scenario (closing a deleted partition's files blocked a broker's event loop for seconds).
 */
async function deleteTopic(procs: ServerProcesses, conns: Connections, name: string): Promise<void> {
  await conns.send(procs.live[0]!.brokerPort, ApiKey.DeleteTopics, 6, { topics: [{ name, topicId: ZERO_UUID }], topicNames: [name], timeoutMs: 30_000 });
  const dirs = procs.nodes.map((n) => n.dir);
  const held = () => dirs.some((d) => readdirSync(d).some((f) => f.startsWith(`${name}-`) && !f.endsWith('-delete')));
  await until(`${name} deleted on every node`, async () => (held() ? undefined : true), 100, 60_000);
  await settleDirtyPages(...dirs);
}

const RECORD = ['--record-size', String(RECORD_BYTES)];

// ---------------------------------------------------------------------------------------------

async function singleNode(): Promise<Record<string, unknown>> {
  say('single node, acks=1');
  return withNodes(1, {}, async (procs, conns) => {
    const port = procs.nodes[0]!.brokerPort;
    await until('create single', async () => {
      const r = await conns.send<any>(port, ApiKey.CreateTopics, 7, { topics: [createTopic('single', PARTITIONS, 1)], timeoutMs: 10_000, validateOnly: false });
      return r?.topics?.[0]?.errorCode === 0 ? true : undefined;
    }, 50, 30_000);
    return withCpu(procs, async () => pick(await bench(procs, ['produce', '--topic', 'single', ...RECORD, '--acks', '1', '--num-records', String(size.records)])));
  });
}

async function throughputAndLatency(procs: ServerProcesses, conns: Connections, result: Record<string, any>): Promise<void> {
  if (runs('throughput')) {
    for (const [name, acks] of [['acks1', '1'], ['acksAll', '-1']] as const) {
      const topic = `throughput-${name}`;
      await createReplicated(procs, conns, topic);
      say(`three nodes, RF 3, ${name}`);
      result.throughput[name] = await withCpu(procs, async () => pick(await bench(procs, ['produce', '--topic', topic, ...RECORD, '--acks', acks, '--num-records', String(size.records)])));
      await deleteTopic(procs, conns, topic);
    }
  }
  if (runs('latency')) {
    for (const [name, acks] of [['acksAll', '-1'], ['acks1', '1']] as const) {
      const topic = `latency-${name}`;
      await createReplicated(procs, conns, topic);
      // The warm-up runs first at the same rate, left out of the latencies: the brokers' code for
      // small batches to a new topic is cold (V8 optimizes it over the first seconds: acks=all p99
      // 36-91 ms in the first three 1 s windows of a fresh cluster, 1-9 ms from the sixth on).
      const args = ['--topic', topic, ...RECORD, '--acks', acks, '--throughput', String(LATENCY_RECORDS_PER_SEC), '--seconds', String(size.latencySeconds),
        '--num-records', String(LATENCY_RECORDS_PER_SEC * size.latencySeconds), '--linger-ms', '1', '--warmup-seconds', String(size.warmupSeconds)];
      const dirtyMiBAtStart = await settleDirtyPages(...procs.nodes.map((n) => n.dir));
      say(`latency at 20 MB/s: logline bench e2e ${args.join(' ')}`);
      result.latencyAt20MBps[name] = { command: `logline bench e2e ${args.join(' ')}`, ...await withCpu(procs, async () => pick(await bench(procs, ['e2e', ...args]))), dirtyMiBAtStart };
      await deleteTopic(procs, conns, topic);
    }
  }
}

/** A one-record batch. */
const oneRecord = buildRecordBatchSync({ records: [{ key: null, value: Buffer.alloc(RECORD_BYTES, 0x62) }] });

/** An acks=all write of one record to `topic`-`partition` through the leader `port`; its error code (undefined: no answer). */
async function writeAll(conns: Connections, port: number, topic: string, partition: number): Promise<number | undefined> {
  const r = await conns.send<any>(port, ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 2000, topicData: [{ name: topic, partitionData: [{ index: partition, records: oneRecord }] }] });
  return r?.responses?.[0]?.partitionResponses?.[0]?.errorCode;
}

/** The active controller's node and a partition led by another node (so a kill leaves the metadata quorum's leader alone). */
async function leaderToKill(procs: ServerProcesses, conns: Connections, topic: string): Promise<{ controller: ServerProcess; victim: ServerProcess; partition: number; led: number }> {
  const { node: controller } = await steadyLeader(conns, procs, true);
  const view = (await topicView(conns, controller.brokerPort, topic))!;
  const p = view.partitions.find((x) => x.leader !== controller.id)!;
  return { controller, victim: procs.nodes.find((n) => n.id === p.leader)!, partition: p.partition, led: view.partitions.filter((x) => x.leader === p.leader).length };
}

/** Until `victim` leads its preferred partitions again (restarted, back in the ISR, a preferred election). */
async function restoreLeaders(procs: ServerProcesses, conns: Connections, victim: ServerProcess, topic: string): Promise<void> {
  await procs.startNode(victim);
  await fullyReplicated(procs, conns, topic);
  await until('preferred leaders', async () => {
    const r = await conns.send<any>(procs.live[0]!.brokerPort, ApiKey.ElectLeaders, 2, { electionType: 0, topicPartitions: null, timeoutMs: 10_000 });
    return r?.errorCode === 0 ? true : undefined;
  }, 200, 30_000);
  await until(`node ${victim.id} leads again`, async () => {
    const v = await topicView(conns, procs.live[0]!.brokerPort, topic);
    return v?.partitions.some((p) => p.leader === victim.id) ? true : undefined;
  }, 50, 30_000);
}

async function failover(procs: ServerProcesses, conns: Connections): Promise<Record<string, unknown>> {
  const topic = 'failover';
  await createReplicated(procs, conns, topic);
  const runsOut: Record<string, number>[] = [];
  for (let r = 0; r < size.repetitions; r++) {
    const { victim, partition } = await leaderToKill(procs, conns, topic);
    if (await writeAll(conns, victim.brokerPort, topic, partition) !== 0) throw new Error('acks=all write before the kill failed');
    await sleep(300);
    const killedAt = performance.now();
    await procs.kill9(victim);
    const survivors = procs.live;
    let electedMs = -1;
    // Like a client: ask a survivor for the leader, write there, again until it is acknowledged.
    await until('an acks=all write on the new leader', async () => {
      for (const s of survivors) {
        const v = await topicView(conns, s.brokerPort, topic);
        const leader = v?.partitions[partition]?.leader;
        const target = survivors.find((n) => n.id === leader);
        if (target === undefined) continue;
        if (electedMs < 0) electedMs = performance.now() - killedAt;
        if (await writeAll(conns, target.brokerPort, topic, partition) === 0) return true;
      }
      return undefined;
    }, 5, 60_000);
    const run = { victim: victim.id, partition, newLeaderSeenMs: Math.round(electedMs), firstAcksAllWriteMs: Math.round(performance.now() - killedAt) };
    say(`  failover ${r + 1}: ${JSON.stringify(run)}`);
    runsOut.push(run);
    await restoreLeaders(procs, conns, victim, topic);
  }
  await deleteTopic(procs, conns, topic);
  const ms = runsOut.map((x) => x.firstAcksAllWriteMs!);
  return { runs: runsOut, firstAcksAllWrite: stats(ms) };
}

async function controlledShutdown(procs: ServerProcesses, conns: Connections): Promise<Record<string, unknown>> {
  const topic = 'shutdown';
  await createReplicated(procs, conns, topic);
  const runsOut: Record<string, number>[] = [];
  for (let r = 0; r < size.repetitions; r++) {
    const { controller, victim, led } = await leaderToKill(procs, conns, topic);
    await sleep(300);
    const signalledAt = performance.now();
    let exitedMs = -1;
    const exited = procs.stop(victim).then(() => { exitedMs = performance.now() - signalledAt; });
    // The controller's own Metadata: it is the first to know the leaders moved.
    await until('leaderships moved away', async () => {
      const v = await topicView(conns, controller.brokerPort, topic);
      return v !== undefined && v.partitions.every((p) => p.leader >= 0 && p.leader !== victim.id) ? true : undefined;
    }, 2, 60_000);
    const movedMs = performance.now() - signalledAt;
    await exited;
    const run = { victim: victim.id, partitionsLed: led, leadershipMovedMs: Math.round(movedMs), processExitedMs: Math.round(exitedMs) };
    say(`  controlled shutdown ${r + 1}: ${JSON.stringify(run)}`);
    runsOut.push(run);
    await restoreLeaders(procs, conns, victim, topic);
  }
  await deleteTopic(procs, conns, topic);
  return { runs: runsOut, leadershipMoved: stats(runsOut.map((x) => x.leadershipMovedMs!)) };
}

async function catchUp(procs: ServerProcesses, conns: Connections): Promise<Record<string, unknown>> {
  const topic = 'catch-up';
  await createReplicated(procs, conns, topic);
  const { victim: leader, controller } = await leaderToKill(procs, conns, topic);
  // A follower that is neither the active controller nor needed: the third node.
  const follower = procs.nodes.find((n) => n !== leader && n !== controller) ?? leader;
  await procs.kill9(follower);
  await until(`node ${follower.id} out of every ISR`, async () => {
    const v = await topicView(conns, controller.brokerPort, topic);
    return v?.partitions.every((p) => !p.isr.includes(follower.id)) ? true : undefined;
  }, 50, 60_000);
  say(`catch-up: writing ${size.backlogRecords} records while node ${follower.id} is down`);
  const written = await bench(procs, ['produce', '--topic', topic, ...RECORD, '--acks', '1', '--num-records', String(size.backlogRecords)]);
  if (written.error) throw new Error(`backlog: ${written.error}`);
  const backlogBytes = size.backlogRecords * RECORD_BYTES;
  const restartedAt = performance.now();
  await procs.startNode(follower);
  const listeningMs = performance.now() - restartedAt;
  await until(`node ${follower.id} back in every ISR`, async () => {
    const v = await topicView(conns, controller.brokerPort, topic);
    return v?.partitions.every((p) => p.isr.includes(follower.id)) ? true : undefined;
  }, 20, 300_000);
  const inIsrMs = performance.now() - restartedAt;
  await deleteTopic(procs, conns, topic);
  return {
    follower: follower.id, backlogMiB: round(backlogBytes / 2 ** 20), backlogWrite: pick(written),
    restartToListeningMs: Math.round(listeningMs), restartToInEveryIsrMs: Math.round(inIsrMs),
    mbPerSecFromRestart: round(backlogBytes / 1e6 / (inIsrMs / 1000)), mbPerSecFromListening: round(backlogBytes / 1e6 / ((inIsrMs - listeningMs) / 1000)),
  };
}

// ---------------------------------------------------------------------------------------------

function targets(result: Record<string, any>): Record<string, unknown> {
  const t: Record<string, unknown> = {};
  const single = result.singleNodeAcks1?.mbPerSec;
  const all = result.throughput?.acksAll?.mbPerSec;
  if (single !== undefined && all !== undefined) t['acksAllVsSingleNode'] = { target: '>= 0.25', measured: round(all / single, 3), met: all / single >= 0.25 };
  const p99 = result.latencyAt20MBps?.acksAll?.latencyMs?.p99;
  if (p99 !== undefined) t['acksAllProduceP99At20MBps'] = { target: '<= 15 ms', measuredMs: p99, met: p99 <= 15 };
  const fd = result.failover?.defaultTimeouts?.firstAcksAllWrite?.maxMs;
  if (fd !== undefined) t['failoverDefaults'] = { target: '<= broker.session.timeout.ms + 1000 = 10000 ms', measuredMaxMs: fd, met: fd <= 10_000 };
  const ft = result.failover?.tunedTimeouts?.firstAcksAllWrite?.maxMs;
  if (ft !== undefined) t['failoverTuned'] = { target: '<= 1000 ms', measuredMaxMs: ft, met: ft <= 1000 };
  const cs = result.controlledShutdown?.leadershipMoved?.maxMs;
  if (cs !== undefined) t['controlledShutdown'] = { target: '<= 200 ms', measuredMaxMs: cs, met: cs <= 200 };
  return t;
}

async function main(): Promise<void> {
  const result: Record<string, any> = { bench: 'cluster', date: new Date().toISOString(), quick, only, nodes: 3, partitions: PARTITIONS, recordBytes: RECORD_BYTES, machine: await machine() };
  if (runs('throughput')) result.singleNodeAcks1 = await singleNode();
  if (runs('throughput') || runs('latency') || runs('failover') || runs('shutdown')) {
    say('three nodes, Kafka\'s default session timeouts');
    await withNodes(3, {}, async (procs, conns) => {
      result.throughput = {};
      result.latencyAt20MBps = {};
      await throughputAndLatency(procs, conns, result);
      if (runs('failover')) {
        say('failover, default timeouts (broker.session.timeout.ms 9000, broker.heartbeat.interval.ms 2000)');
        result.failover = { defaultTimeouts: await failover(procs, conns) };
      }
      if (runs('shutdown')) {
        say('controlled shutdown');
        result.controlledShutdown = await controlledShutdown(procs, conns);
      }
    });
  }
  if (runs('failover') || runs('catchUp')) {
    say(`three nodes, tuned: ${JSON.stringify(TUNED)}`);
    await withNodes(3, TUNED, async (procs, conns) => {
      if (runs('failover')) result.failover = { ...result.failover, tunedTimeouts: { props: TUNED, ...await failover(procs, conns) } };
      if (runs('catchUp')) result.catchUp = await catchUp(procs, conns);
    });
  }
  result.targets = targets(result);
  result.loadAverageAfter = loadavg().map((l) => round(l, 2));
  console.log(JSON.stringify({ ...result, node: process.version, benchSeconds: benchRun.seconds() }, null, 2));
}

benchRun.run(main);

// bench/groups: the group coordinator over loopback, driven by raw protocol requests.
//   npm run bench:groups                       (prints one JSON object on stdout, progress on stderr)
//   LOGLINE_BENCH_BROKER=inprocess|child|both  (default both: the broker in this process, then as a child)
//   LOGLINE_BENCH_SECONDS=10                   (length of the measured OffsetCommit window)
//   LOGLINE_BENCH_PARTS=rebalance,commits      (either part alone)
//   LOGLINE_BENCH_HEARTBEAT_MS=100             (the members' heartbeat interval; Kafka's default is 3000)
//   LOGLINE_BENCH_CHILD_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof"   (node flags for the child broker)
//
// 1. Rebalance: 1, 10 and 100 members of one classic group ("consumer" protocol, range-like split
//    computed by the leader as a client does) on a 200-partition topic, with
//    group.initial.rebalance.delay.ms=0. "coldStart": every member starts at once; "oneJoins": one
//    member joins a stable group of N-1. Time runs from the last member's first JoinGroup being
//    sent to the moment every member holds a SyncGroup answer of the same generation and the
//    answers partition the topic exactly once. Members already stable learn of a rebalance from
//    their next heartbeat (as in Kafka), so "oneJoins" includes up to one heartbeat interval.
// 2. OffsetCommit: 1,000 groups commit concurrently (admin commits: generation -1, no member id,
//    which the coordinator accepts for groups not under group management), one partition a
//    commit, one request in flight per group, 10 groups per connection; 1 s of warm-up, then a
//    window bounded in time and count. Every committed offset is read back with OffsetFetch.
// One Node process on this machine both serves and loads in "inprocess" mode; in "child" mode
// the broker (`logline server`) has its own process and event loop. Both compete for the same
// cores (`machine.cpus`), so neither is a broker-only figure.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { startServer } from '../src/node/index.js';
import { parseBrokerConfig } from '../src/config/index.js';
import { BrokerConnection } from '../src/client/index.js';
import { ApiKey, ErrorCode, type ConsumerProtocolAssignment } from '../src/protocol/index.js';
import { decodeVersioned, encodeVersioned } from '../src/coordinator/index.js';
import { Histogram } from '../src/util/index.js';
import { childBroker, processCpuSeconds } from './child-broker.js';

const TOPIC = 'bench-groups';
const PARTITIONS = 200;
const MEMBER_COUNTS = [1, 10, 100];
const REPETITIONS = 3;
const HEARTBEAT_INTERVAL_MS = Number(process.env.LOGLINE_BENCH_HEARTBEAT_MS ?? '100');
const STABLE_TIMEOUT_MS = 20_000;
const MEMBER_ROUNDS_MAX = 1000;
const HEARTBEATS_MAX = 10_000;
const COMMIT_GROUPS = 1000;
const GROUPS_PER_CONNECTION = 10;
const COMMIT_WARMUP_MS = 1000;
const COMMIT_WINDOW_MS = Number(process.env.LOGLINE_BENCH_SECONDS ?? '10') * 1000;
const COMMITS_MAX = 2_000_000;
const TARGET_REBALANCE_MS = 2000;
const TARGET_COMMITS_PER_SECOND = 20_000;

const say = (m: string): void => { process.stderr.write(`bench:groups ${m}\n`); };
const round = (n: number, digits = 1): number => Number(n.toFixed(digits));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const mode = process.env.LOGLINE_BENCH_BROKER ?? 'both';
const parts = new Set((process.env.LOGLINE_BENCH_PARTS ?? 'rebalance,commits').split(','));

interface Broker { port: number; pid: number; close(): Promise<void> }

// ---- brokers ---------------------------------------------------------------------------------------

async function inProcessBroker(dataDir: string): Promise<Broker> {
  const server = await startServer({
    listeners: ['PLAINTEXT://127.0.0.1:0'],
    config: parseBrokerConfig({ 'node.id': '1', 'group.initial.rebalance.delay.ms': '0' }),
    dataDir,
  });
  return { port: server.listeners[0]!.port, pid: process.pid, close: () => server.close() };
}

async function groupsChildBroker(dataDir: string): Promise<Broker> {
  return childBroker(dataDir, { 'group.initial.rebalance.delay.ms': '0' });
}

const open = (port: number, clientId: string): Promise<BrokerConnection> =>
  BrokerConnection.open({ host: '127.0.0.1', port, clientId, requestTimeoutMs: 30_000 });

/** Creates the topic and the offsets topic, and waits until every coordinator shard answers. */
async function prepare(port: number): Promise<void> {
  const c = await open(port, 'bench-admin');
  try {
    const created = await c.send(ApiKey.CreateTopics, 7, {
      topics: [{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false,
    });
    if (created.topics[0].errorCode !== 0) throw new Error(`CreateTopics: error ${created.topics[0].errorCode}`);
    const keys = Array.from({ length: 200 }, (_, i) => `probe-${i}`);
    for (let attempt = 0; attempt < 300; attempt++) {
      const r = await c.send(ApiKey.FindCoordinator, 4, { key: '', keyType: 0, coordinatorKeys: keys });
      const fetched = await c.send(ApiKey.OffsetFetch, 8, {
        groupId: '', topics: null, requireStable: false, groups: keys.map((groupId) => ({ groupId, memberId: null, memberEpoch: -1, topics: null })),
      });
      if (r.coordinators.every((x: any) => x.errorCode === 0) && fetched.groups.every((g: any) => g.errorCode === 0)) return;
      await sleep(100);
    }
    throw new Error('coordinator shards did not load within 30 s');
  } finally {
    c.close();
  }
}

// ---- rebalance -------------------------------------------------------------------------------------

const SUBSCRIPTION = encodeVersioned('ConsumerProtocolSubscription', 1, { topics: [TOPIC], userData: null, ownedPartitions: [] });

/** The leader's split, as the range assignor does for one topic: members by id, contiguous runs. */
function rangeAssign(memberIds: string[]): { memberId: string; assignment: Buffer }[] {
  const ids = [...memberIds].sort();
  const base = Math.floor(PARTITIONS / ids.length);
  const extra = PARTITIONS % ids.length;
  let next = 0;
  return ids.map((memberId, i) => {
    const count = base + (i < extra ? 1 : 0);
    const partitions = Array.from({ length: count }, (_, k) => next + k);
    next += count;
    const value: ConsumerProtocolAssignment = { assignedPartitions: count === 0 ? [] : [{ topic: TOPIC, partitions }], userData: null };
    return { memberId, assignment: encodeVersioned('ConsumerProtocolAssignment', 0, value) };
  });
}

interface Synced { generation: number; partitions: number[]; atMs: number }

/** One consumer's side of the classic protocol: join, sync, heartbeat, rejoin when told to. */
class Member {
  memberId = '';
  firstJoinSentMs = -1;
  lastJoinSentMs = -1;
  synced: Synced | null = null;
  /** JoinGroup requests sent (MEMBER_ID_REQUIRED and rejoins included). */
  rounds = 0;
  heartbeats = 0;
  stopped = false;
  done: Promise<void> = Promise.resolve();

  constructor(readonly conn: BrokerConnection, readonly groupId: string, private readonly onSynced: () => void) {}

  failed: Error | null = null;

  start(): void {
    this.done = this.run().catch((err: unknown) => {
      this.failed = err instanceof Error ? err : new Error(String(err));
      this.onSynced();
    });
  }

  private async run(): Promise<void> {
    while (!this.stopped && this.rounds++ < MEMBER_ROUNDS_MAX) {
      this.lastJoinSentMs = performance.now();
      if (this.firstJoinSentMs < 0) this.firstJoinSentMs = this.lastJoinSentMs;
      const joined = await this.conn.send(ApiKey.JoinGroup, 9, {
        groupId: this.groupId, sessionTimeoutMs: 30_000, rebalanceTimeoutMs: 30_000, memberId: this.memberId, groupInstanceId: null,
        protocolType: 'consumer', protocols: [{ name: 'range', metadata: SUBSCRIPTION }], reason: null,
      });
      if (joined.errorCode === ErrorCode.MEMBER_ID_REQUIRED) { this.memberId = joined.memberId; continue; }
      if (joined.errorCode === ErrorCode.UNKNOWN_MEMBER_ID) { this.memberId = ''; continue; }
      if (joined.errorCode === ErrorCode.REBALANCE_IN_PROGRESS) continue;
      if (joined.errorCode !== 0) throw new Error(`JoinGroup: error ${joined.errorCode}`);
      const leader = joined.leader === this.memberId;
      const synced = await this.conn.send(ApiKey.SyncGroup, 5, {
        groupId: this.groupId, generationId: joined.generationId, memberId: this.memberId, groupInstanceId: null,
        protocolType: 'consumer', protocolName: 'range', assignments: leader ? rangeAssign(joined.members.map((m: any) => m.memberId)) : [],
      });
      if (synced.errorCode === ErrorCode.UNKNOWN_MEMBER_ID) { this.memberId = ''; continue; }
      if (synced.errorCode === ErrorCode.REBALANCE_IN_PROGRESS || synced.errorCode === ErrorCode.ILLEGAL_GENERATION) continue;
      if (synced.errorCode !== 0) throw new Error(`SyncGroup: error ${synced.errorCode}`);
      const a = decodeVersioned<ConsumerProtocolAssignment>('ConsumerProtocolAssignment', 3, synced.assignment);
      this.synced = { generation: joined.generationId, partitions: a?.assignedPartitions.flatMap((t) => t.partitions) ?? [], atMs: performance.now() };
      this.onSynced();
      await this.heartbeatUntilRebalance(joined.generationId);
    }
  }

  private async heartbeatUntilRebalance(generationId: number): Promise<void> {
    while (!this.stopped && this.heartbeats++ < HEARTBEATS_MAX) {
      await sleep(HEARTBEAT_INTERVAL_MS);
      if (this.stopped) return;
      const hb = await this.conn.send(ApiKey.Heartbeat, 4, { groupId: this.groupId, generationId, memberId: this.memberId, groupInstanceId: null });
      if (hb.errorCode === ErrorCode.UNKNOWN_MEMBER_ID) this.memberId = '';
      if (hb.errorCode !== 0) { this.synced = null; return; }
    }
  }
}

/** Members of one group, and the moment they became stable together. */
class Group {
  readonly members: Member[] = [];
  private waiter: { expected: number; resolve: (atMs: number) => void; reject: (err: Error) => void } | null = null;

  constructor(readonly groupId: string) {}

  async add(port: number, count: number): Promise<Member[]> {
    const conns = await Promise.all(Array.from({ length: count }, (_, i) => open(port, `bench-member-${this.members.length + i}`)));
    const added = conns.map((c) => new Member(c, this.groupId, () => this.check()));
    this.members.push(...added);
    return added;
  }

  /** Resolves with the time all `expected` members hold one generation's complete, disjoint assignment. */
  stable(expected: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { this.waiter = null; reject(new Error(`${this.groupId}: not stable within ${STABLE_TIMEOUT_MS} ms`)); }, STABLE_TIMEOUT_MS);
      this.waiter = {
        expected,
        resolve: (atMs) => { clearTimeout(timer); resolve(atMs); },
        reject: (err) => { clearTimeout(timer); reject(err); },
      };
      this.check();
    });
  }

  private check(): void {
    const w = this.waiter;
    if (!w) return;
    const failed = this.members.find((m) => m.failed !== null);
    if (failed) { this.waiter = null; return w.reject(new Error(`${this.groupId}: member failed: ${failed.failed!.message}`)); }
    if (this.members.length !== w.expected) return;
    const synced = this.members.map((m) => m.synced);
    if (synced.some((s) => s === null)) return;
    const generation = synced[0]!.generation;
    if (synced.some((s) => s!.generation !== generation)) return;
    const seen = new Uint8Array(PARTITIONS);
    let total = 0;
    for (const s of synced) for (const p of s!.partitions) { if (p < 0 || p >= PARTITIONS || seen[p]) return; seen[p] = 1; total++; }
    if (total !== PARTITIONS) return;
    this.waiter = null;
    w.resolve(Math.max(...synced.map((s) => s!.atMs)));
  }

  generation(): number { return this.members[0]?.synced?.generation ?? -1; }

  async stop(): Promise<void> {
    for (const m of this.members) m.stopped = true;
    await Promise.race([Promise.allSettled(this.members.map((m) => m.done)), sleep(5000)]);
    for (const m of this.members) m.conn.close();
  }
}

/**
 * `ms` from the last member's first JoinGroup; `afterLastRejoinMs` from the last JoinGroup any
 * member sent, which leaves out the wait for heartbeats to report the rebalance (the coordinator's
 * own share); `joinGroupRounds` counts JoinGroup requests, MEMBER_ID_REQUIRED round trips included.
 */
interface RebalanceRun { ms: number; afterLastRejoinMs: number; generation: number; joinGroupRounds: number }

const lastJoinMs = (members: Member[]): number => Math.max(...members.map((m) => m.lastJoinSentMs));

async function coldStart(port: number, n: number, rep: number): Promise<RebalanceRun> {
  const g = new Group(`cold-${n}-${rep}`);
  try {
    const members = await g.add(port, n);
    const stable = g.stable(n);
    for (const m of members) m.start();
    const atMs = await stable;
    const lastFirstJoinMs = Math.max(...members.map((m) => m.firstJoinSentMs));
    return { ms: round(atMs - lastFirstJoinMs, 2), afterLastRejoinMs: round(atMs - lastJoinMs(members), 2), generation: g.generation(), joinGroupRounds: members.reduce((s, m) => s + m.rounds, 0) };
  } finally {
    await g.stop();
  }
}

async function oneJoins(port: number, n: number, rep: number): Promise<RebalanceRun> {
  const g = new Group(`grow-${n}-${rep}`);
  try {
    const first = await g.add(port, n - 1);
    const settled = g.stable(n - 1);
    for (const m of first) m.start();
    await settled;
    const before = g.members.reduce((s, m) => s + m.rounds, 0);
    const [last] = await g.add(port, 1);
    const stable = g.stable(n);
    last!.start();
    const atMs = await stable;
    return { ms: round(atMs - last!.firstJoinSentMs, 2), afterLastRejoinMs: round(atMs - lastJoinMs(g.members), 2), generation: g.generation(), joinGroupRounds: g.members.reduce((s, m) => s + m.rounds, 0) - before };
  } finally {
    await g.stop();
  }
}

function summary(runs: RebalanceRun[]): object {
  const ms = runs.map((r) => r.ms).sort((a, b) => a - b);
  return { msMedian: ms[Math.floor(ms.length / 2)], msMax: ms[ms.length - 1], afterLastRejoinMsMax: Math.max(...runs.map((r) => r.afterLastRejoinMs)), runs };
}

async function benchRebalance(port: number): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const n of MEMBER_COUNTS) {
    const cold: RebalanceRun[] = [];
    const grow: RebalanceRun[] = [];
    for (let rep = 0; rep < REPETITIONS; rep++) {
      cold.push(await coldStart(port, n, rep));
      if (n > 1) grow.push(await oneJoins(port, n, rep));
    }
    out[`members${n}`] = { coldStart: summary(cold), ...(n > 1 ? { oneJoins: summary(grow) } : {}) };
    say(`rebalance ${n} members: cold ${cold.map((r) => r.ms).join(', ')} ms${n > 1 ? `; one joins ${grow.map((r) => r.ms).join(', ')} ms` : ''}`);
  }
  return out;
}

// ---- offset commits -------------------------------------------------------------------------------

const commitRequest = (groupId: string, offset: number) => ({
  groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1n,
  topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, committedOffset: BigInt(offset), committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] }],
});

async function benchCommits(port: number, brokerPid: number): Promise<Record<string, unknown>> {
  const conns = await Promise.all(Array.from({ length: COMMIT_GROUPS / GROUPS_PER_CONNECTION }, (_, i) => open(port, `bench-commit-${i}`)));
  const acked = new Array<number>(COMMIT_GROUPS).fill(-1);
  const latencyUs = new Histogram();
  const errors = new Map<number, number>();
  const startMs = performance.now();
  const windowStartMs = startMs + COMMIT_WARMUP_MS;
  const windowEndMs = windowStartMs + COMMIT_WINDOW_MS;
  let inWindow = 0;
  let total = 0;
  const loop = async (g: number): Promise<void> => {
    const conn = conns[Math.floor(g / GROUPS_PER_CONNECTION)]!;
    for (let offset = 0; total < COMMITS_MAX; offset++) {
      const sentMs = performance.now();
      if (sentMs >= windowEndMs) return;
      const r = await conn.send(ApiKey.OffsetCommit, 8, commitRequest(`commit-${g}`, offset));
      const doneMs = performance.now();
      total++;
      const code = r.topics[0].partitions[0].errorCode as number;
      if (code !== 0) { errors.set(code, (errors.get(code) ?? 0) + 1); continue; }
      acked[g] = offset;
      // The rate counts commits answered inside the window; latency, those also sent inside it.
      if (doneMs < windowStartMs || doneMs > windowEndMs) continue;
      inWindow++;
      if (sentMs >= windowStartMs) latencyUs.record((doneMs - sentMs) * 1000);
    }
  };
  const load = Array.from({ length: COMMIT_GROUPS }, (_, g) => loop(g));
  let totalAtWarmup = 0;
  let cpu0 = { self: 0, broker: null as number | null };
  let cpu1 = cpu0;
  let mismatched = -1;
  let loadEndMs = windowEndMs;
  try {
    await Promise.race([Promise.all(load), sleep(COMMIT_WARMUP_MS)]);
    totalAtWarmup = total;
    cpu0 = { self: processCpuSeconds(process.pid)!, broker: processCpuSeconds(brokerPid) };
    await Promise.all(load);
    loadEndMs = performance.now();
    cpu1 = { self: processCpuSeconds(process.pid)!, broker: processCpuSeconds(brokerPid) };
    mismatched = await verifyCommits(conns[0]!, acked);
  } finally {
    for (const c of conns) c.close();
    await Promise.allSettled(load);
  }
  const brokerCpu = cpu0.broker === null || cpu1.broker === null ? null : cpu1.broker - cpu0.broker;
  const commitsSinceWarmup = total - totalAtWarmup;
  const elapsedMs = Math.min(loadEndMs, windowEndMs) - windowStartMs;
  const ms = (us: number) => round(us / 1000, 2);
  return {
    groups: COMMIT_GROUPS, connections: conns.length, inFlightPerGroup: 1, partitionsPerCommit: 1, version: 8,
    warmupMs: COMMIT_WARMUP_MS, windowMs: round(elapsedMs, 0), commitsInWindow: inWindow, latencySamples: latencyUs.total, commitsTotal: total,
    commitsPerSecond: round(inWindow / (elapsedMs / 1000), 0),
    latencyMs: { p50: ms(latencyUs.percentile(50)), p99: ms(latencyUs.percentile(99)), p999: ms(latencyUs.percentile(99.9)), max: ms(latencyUs.max), mean: ms(latencyUs.mean) },
    errors: Object.fromEntries(errors), readBackMismatches: mismatched,
    // CPU time this process (and the broker's, when it is a child) got during the window: on a
    // loaded machine this says how much of the wall-clock time the benchmark actually ran.
    windowCpuSeconds: brokerPid === process.pid
      ? { brokerAndLoadGenerator: round(cpu1.self - cpu0.self, 2) }
      : { loadGenerator: round(cpu1.self - cpu0.self, 2), broker: brokerCpu === null ? null : round(brokerCpu, 2) },
    // CPU cost of one commit, which a busy machine disturbs far less than the rate.
    cpuUsPerCommit: brokerPid === process.pid
      ? { brokerAndLoadGenerator: round(((cpu1.self - cpu0.self) * 1e6) / commitsSinceWarmup, 1) }
      : { loadGenerator: round(((cpu1.self - cpu0.self) * 1e6) / commitsSinceWarmup, 1), broker: brokerCpu === null ? null : round((brokerCpu * 1e6) / commitsSinceWarmup, 1) },
    loadavg1m: round(loadavg()[0]!, 2),
  };
}

/** Reads every group's offset back (OffsetFetch v8, 100 groups a request); counts those that differ. */
async function verifyCommits(conn: BrokerConnection, acked: number[]): Promise<number> {
  let mismatched = 0;
  for (let first = 0; first < acked.length; first += 100) {
    const ids = acked.slice(first, first + 100).map((_, i) => first + i);
    const r = await conn.send(ApiKey.OffsetFetch, 8, {
      groupId: '', topics: null, requireStable: false,
      groups: ids.map((g) => ({ groupId: `commit-${g}`, memberId: null, memberEpoch: -1, topics: [{ name: TOPIC, partitionIndexes: [0] }] })),
    });
    r.groups.forEach((x: any, i: number) => { if (x.topics[0]?.partitions[0]?.committedOffset !== BigInt(acked[ids[i]!]!)) mismatched++; });
  }
  return mismatched;
}

// ---- driver ---------------------------------------------------------------------------------------

async function benchOne(kind: 'inprocess' | 'child'): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), `logline-bench-groups-${kind}-`));
  say(`${kind}: broker data in ${dataDir}`);
  let broker: Broker | null = null;
  try {
    broker = kind === 'inprocess' ? await inProcessBroker(dataDir) : await groupsChildBroker(dataDir);
    await prepare(broker.port);
    const rebalance = parts.has('rebalance') ? await benchRebalance(broker.port) : null;
    let offsetCommit: Record<string, unknown> | null = null;
    if (parts.has('commits')) {
      say(`${kind}: offset commits, ${COMMIT_GROUPS} groups for ${COMMIT_WINDOW_MS / 1000} s after ${COMMIT_WARMUP_MS / 1000} s warm-up`);
      offsetCommit = await benchCommits(broker.port, broker.pid);
      say(`${kind}: ${offsetCommit.commitsPerSecond} commits/s`);
    }
    const m100 = rebalance?.members100 as any;
    return {
      broker: kind === 'inprocess' ? 'same Node process as the load generator' : `child process (pid ${broker.pid}), load generator in this process`,
      rebalance, offsetCommit,
      vsTarget: {
        rebalance100ColdStartMaxOverTarget: m100 ? round(m100.coldStart.msMax / TARGET_REBALANCE_MS, 3) : null,
        rebalance100OneJoinsMaxOverTarget: m100 ? round(m100.oneJoins.msMax / TARGET_REBALANCE_MS, 3) : null,
        commitsPerSecondOverTarget: offsetCommit ? round((offsetCommit.commitsPerSecond as number) / TARGET_COMMITS_PER_SECOND, 3) : null,
      },
    };
  } finally {
    await broker?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const kinds: ('inprocess' | 'child')[] = mode === 'both' ? ['inprocess', 'child'] : [mode as 'inprocess' | 'child'];
  if (!kinds.every((k) => k === 'inprocess' || k === 'child')) throw new Error(`LOGLINE_BENCH_BROKER: inprocess, child or both, got "${mode}"`);
  const results: Record<string, unknown> = {};
  for (const k of kinds) results[k] = await benchOne(k);
  console.log(JSON.stringify({
    bench: 'groups', node: process.version,
    machine: { cpus: cpus().length, loadavg1m: round(loadavg()[0]!, 2), note: 'broker and load generator share this machine; in "inprocess" mode they share one Node event loop' },
    setup: {
      topicPartitions: PARTITIONS, initialRebalanceDelayMs: 0, heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS, sessionTimeoutMs: 30_000,
      rebalanceTimeoutMs: 30_000, repetitions: REPETITIONS, assignor: 'range-like, computed by the leader', offsetsTopicPartitions: 50,
      storage: 'data directory on this machine (temporary, removed at the end)',
    },
    targets: { rebalance100Ms: TARGET_REBALANCE_MS, commitsPerSecond: TARGET_COMMITS_PER_SECOND },
    ...results,
  }, null, 2));
}

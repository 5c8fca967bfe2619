// bench/raft: three Raft voters as real processes on 127.0.0.1 (file stores with fsync, Kafka-framed
// RPCs), driven through each node's JSON-lines control channel.
//   npm run bench:raft          (prints one JSON object on stdout, progress on stderr)
//   LOGLINE_BENCH_SCALE=0.5 npm run bench:raft    (shorter phases)
//   LOGLINE_BENCH_PHASES=load LOGLINE_BENCH_CPU_PROF=/tmp/prof npm run bench:raft   (profile the voters)
//   LOGLINE_BENCH_NODE_ARGS='--max-semi-space-size=4' npm run bench:raft   (node options for the voters)
//   LOGLINE_BENCH_LATENCY_RATE=100000 npm run bench:raft   (latency phase at a fixed rate instead of half the throughput)
//   LOGLINE_BENCH_PHASES=latency LOGLINE_BENCH_LATENCY_RATE=50000 npm run bench:raft   (only that phase)
//   LOGLINE_RAFT_STAGES=DIR ...   (per-commit stage times of the voters and the client in DIR, for a breakdown)
//
// 1. fsync of a small append in the data directory, one file and three at once (the floor under
//    every commit).
// 2. Throughput: committed 100-byte records per second, closed loop, batches of `batchRecords`
//    with `window` batches in flight to the leader.
// 3. Latency: open loop at half the measured throughput; each batch's commit latency (write of
//    the propose line to its acknowledgement) goes into a Histogram weighted by its records; the
//    leader's own view (line read to committed) is reported beside it.
// 4. Fail-over: under a light steady load, kill -9 the leader and time until a proposal to the new
//    leader is acknowledged; with Kafka's default timeouts and with a 200 ms election timeout.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ProcessCluster, type NodeProcess } from '../src/raft/node/process-cluster.js';
import { Histogram } from '../src/util/index.js';
import { fsyncFloor } from './limits.js';

const scale = Number(process.env['LOGLINE_BENCH_SCALE'] ?? '1');
const say = (m: string): void => { process.stderr.write(`bench:raft ${m}\n`); };
const round = (n: number, digits = 1): number => Number(n.toFixed(digits));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const phases = process.env['LOGLINE_BENCH_PHASES'] ?? 'all';
const recordBytes = 100;
const batchRecords = 1000;
const window = 8;

const payload = 'x'.repeat(recordBytes - 12);
let seq = 0;
function values(n: number): string[] {
  const out = new Array<string>(n);
  for (let i = 0; i < n; i++) out[i] = `${String(seq++).padStart(11, '0')}-${payload}`;
  return out;
}

async function throughput(leader: NodeProcess, seconds: number): Promise<{ recordsPerSec: number; mbPerSec: number; committed: number }> {
  let committed = 0;
  let stop = false;
  const lane = async (): Promise<void> => {
    while (!stop) {
      const r = await leader.propose(values(batchRecords), 30_000);
      if (!r.ok) throw new Error(`throughput: proposal refused: ${r.error}`);
      committed += batchRecords;
    }
  };
  const lanes = Array.from({ length: window }, () => lane());
  // Warm up, then count only the measured interval.
  await sleep(1000 * scale);
  const c0 = committed;
  const m0 = performance.now();
  await sleep(seconds * 1000);
  const c1 = committed;
  const m1 = performance.now();
  stop = true;
  await Promise.all(lanes);
  const recordsPerSec = (c1 - c0) / ((m1 - m0) / 1000);
  return { recordsPerSec: Math.round(recordsPerSec), mbPerSec: round(recordsPerSec * recordBytes / 1e6), committed };
}

type GcStats = { scavenges: number; scavengeMs: number; majors: number; majorMs: number; maxMs: number };
type FsyncStats = { count: number; p50Ms: number; p99Ms: number; maxMs: number; over5MsCount: number; over5MsSumMs: number };
type LatencyOp = { p50Us: number; p99Us: number; gc: GcStats; cpuUserMs: number; cpuSystemMs: number; fsync: FsyncStats };

async function latency(cluster: ProcessCluster, leader: NodeProcess, ratePerSec: number, seconds: number): Promise<Record<string, unknown>> {
  const h = new Histogram();
  // LOGLINE_RAFT_STAGES=DIR: the client's (sent, acknowledged, last offset) per proposal, beside the voters' stages.
  const stagesDir = process.env['LOGLINE_RAFT_STAGES'];
  const clientStages: string[] = [];
  for (const n of cluster.nodes) await n.request({ op: 'latency' });
  const pending: Array<Promise<void>> = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let sent = 0;
  let failures = 0;
  // Every millisecond (or as close as the timer allows), send what is due since the start.
  while (performance.now() - t0 < seconds * 1000) {
    const due = Math.floor(((performance.now() - t0) / 1000) * ratePerSec) - sent;
    if (due > 0) {
      const start = performance.now();
      const n = due;
      sent += n;
      pending.push(leader.propose(values(n), 30_000).then((r) => {
        if (!r.ok) { failures++; return; }
        const end = performance.now();
        h.record((end - start) * 1000, n);
        if (stagesDir !== undefined) clientStages.push(`${(performance.timeOrigin + start).toFixed(3)}\t${(performance.timeOrigin + end).toFixed(3)}\t${r.lastOffset}\t${n}`);
      }));
    }
    await sleep(1);
  }
  await Promise.all(pending);
  const elapsed = (performance.now() - t0) / 1000;
  if (stagesDir !== undefined) writeFileSync(join(stagesDir, 'client.tsv'), `${clientStages.join('\n')}\n`);
  // The same commits timed inside the leader (line read -> committed), without the pipes.
  const clientCpu = process.cpuUsage(cpu0);
  const inLeader = await leader.request<LatencyOp>({ op: 'latency' });
  // Garbage-collection pauses per voter during the phase (leader first).
  const gcPerVoter: Array<Record<string, number>> = [];
  // CPU time (user + system) of each voter (leader first) and of this client during the phase.
  const cpuMsPerVoter: number[] = [];
  // Each voter's log fsyncs during the phase: a disk that stalls shows here (ms spent in fsyncs over 5 ms).
  const fsyncPerVoter: Array<Record<string, number>> = [];
  for (const n of [leader, ...cluster.nodes.filter((x) => x !== leader)]) {
    const r = n === leader ? inLeader : await n.request<LatencyOp>({ op: 'latency' });
    gcPerVoter.push({ nodeId: n.id, scavenges: r.gc.scavenges, scavengeMs: round(r.gc.scavengeMs), majors: r.gc.majors, majorMs: round(r.gc.majorMs), maxPauseMs: round(r.gc.maxMs, 2) });
    cpuMsPerVoter.push(Math.round(r.cpuUserMs + r.cpuSystemMs));
    const f = r.fsync;
    fsyncPerVoter.push({ nodeId: n.id, count: f.count, p50Ms: round(f.p50Ms, 2), p99Ms: round(f.p99Ms, 2), maxMs: round(f.maxMs, 1), over5MsCount: f.over5MsCount, over5MsSumMs: f.over5MsSumMs });
  }
  return {
    gcPerVoter, fsyncPerVoter, cpuMsPerVoter, clientCpuMs: Math.round((clientCpu.user + clientCpu.system) / 1000), seconds: round(elapsed, 2),
    leaderSideP50Ms: round(inLeader.p50Us / 1000, 2), leaderSideP99Ms: round(inLeader.p99Us / 1000, 2),
    offeredPerSec: Math.round(ratePerSec), achievedPerSec: Math.round(h.total / elapsed), records: h.total, failures,
    p50Ms: round(h.percentile(50) / 1000, 2), p99Ms: round(h.percentile(99) / 1000, 2), p999Ms: round(h.percentile(99.9) / 1000, 2),
    maxMs: round(h.max / 1000, 2),
  };
}

/** Kill -9 the leader under a light load; ms from the kill to the first acknowledgement by a new leader. */
async function failover(cluster: ProcessCluster, rounds: number): Promise<number[]> {
  const times: number[] = [];
  for (let k = 0; k < rounds; k++) {
    const { node: leader, epoch } = await cluster.waitForLeader(20_000);
    // A proposal commits first, so the cluster is steady before the kill.
    const r = await leader.propose(values(1), 10_000);
    if (!r.ok) throw new Error(`failover: warm-up proposal refused: ${r.error}`);
    await sleep(200);
    const killedAt = performance.now();
    await leader.kill9();
    let ackedAt: number | undefined;
    while (ackedAt === undefined && performance.now() - killedAt < 30_000) {
      for (const n of cluster.nodes) {
        if (!n.alive) continue;
        const s = await n.status().catch(() => undefined);
        if (s?.role !== 'leader' || s.epoch <= epoch) continue;
        const p = await n.propose(values(1), 10_000).catch(() => undefined);
        if (p?.ok === true) { ackedAt = performance.now(); break; }
      }
      if (ackedAt === undefined) await sleep(2);
    }
    if (ackedAt === undefined) throw new Error('failover: no new leader committed within 30 s');
    times.push(Math.round(ackedAt - killedAt));
    say(`  kill ${k + 1}: ${times[times.length - 1]} ms`);
    await leader.start();
    await sleep(500);
  }
  return times;
}

function summary(times: number[]): Record<string, number | number[]> {
  const sorted = [...times].sort((a, b) => a - b);
  return { runsMs: times, medianMs: sorted[Math.floor(sorted.length / 2)]!, maxMs: sorted[sorted.length - 1]! };
}

async function withCluster<T>(root: string, name: string, props: Record<string, string | number>, fn: (c: ProcessCluster) => Promise<T>): Promise<T> {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  const profDir = process.env['LOGLINE_BENCH_CPU_PROF'];
  const nodeArgs = (process.env['LOGLINE_BENCH_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '');
  const execArgv = [...nodeArgs, ...(profDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profDir}`])];
  const cluster = await ProcessCluster.start({ size: 3, baseDir: dir, props, execArgv });
  try {
    const v = await fn(cluster);
    await cluster.stop();
    return v;
  } catch (err) {
    for (const n of cluster.nodes) if (n.stderr !== '') say(`node ${n.id} stderr: ${n.stderr.slice(-2000)}`);
    throw err;
  } finally {
    cluster.killAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(process.env['LOGLINE_BENCH_DIR'] ?? tmpdir(), 'logline-bench-raft-'));
  try {
    const loadBefore = loadavg().map((l) => round(l, 2));
    say('fsync floor');
    const fsyncFloorMs = await fsyncFloor(root, 2000 * scale);
    // Bounded memory for a long run: counter state machine, snapshot (and drop the in-memory log) often.
    const loadProps = { 'state.machine': 'counter', 'snapshot.every.entries': Number(process.env['LOGLINE_BENCH_SNAPSHOT_EVERY'] ?? 50_000) };
    say('throughput and latency');
    const { tput, lat } = await withCluster(root, 'load', loadProps, async (cluster) => {
      const { node: leader } = await cluster.waitForLeader(20_000);
      // LOGLINE_BENCH_LATENCY_RATE fixes the offered rate, so two builds can be compared at the same load;
      // with LOGLINE_BENCH_PHASES=latency the throughput phase is skipped (a short run, a clean profile).
      const fixedRate = process.env['LOGLINE_BENCH_LATENCY_RATE'];
      const tput = phases === 'latency' && fixedRate !== undefined
        ? { recordsPerSec: 0, mbPerSec: 0, committed: 0 } : await throughput(leader, 5 * scale);
      say(`  ${tput.recordsPerSec} records/s`);
      await sleep(500);
      const rate = Number(fixedRate ?? tput.recordsPerSec / 2);
      const lat = await latency(cluster, leader, rate, 5 * scale);
      say(`  at ${lat.offeredPerSec}/s: p50 ${lat.p50Ms} ms, p99 ${lat.p99Ms} ms`);
      return { tput, lat };
    });
    if (phases !== 'all') {
      console.log(JSON.stringify({ bench: 'raft', fsync200B: fsyncFloorMs, loadAverageBefore: loadBefore, loadAverageAfter: loadavg().map((l) => round(l, 2)), throughput: tput, latencyAtHalfLoad: lat }));
      return;
    }
    const rounds = Math.max(2, Math.round(5 * scale));
    say('fail-over, default timeouts');
    const defaults = await withCluster(root, 'failover-default', {}, (c) => failover(c, rounds));
    const fastProps = {
      'controller.quorum.election.timeout.ms': 200, 'controller.quorum.fetch.timeout.ms': 400,
      'controller.quorum.request.timeout.ms': 400, 'fetch.max.wait.ms': 100,
    };
    say('fail-over, 200 ms election timeout');
    const fast = await withCluster(root, 'failover-200', fastProps, (c) => failover(c, rounds));
    console.log(JSON.stringify({
      bench: 'raft', voters: 3, node: process.version, cpus: cpus().length, recordBytes, batchRecords, window,
      fsync200B: fsyncFloorMs,
      loadProps, voterNodeOptions: process.env['LOGLINE_BENCH_NODE_ARGS'] ?? '', loadAverageBefore: loadBefore, loadAverageAfter: loadavg().map((l) => round(l, 2)),
      throughput: { ...tput, targetRecordsPerSec: 100_000 },
      latencyAtHalfLoad: { ...lat, targetP99Ms: 10 },
      failoverDefaultTimeouts: { ...summary(defaults), props: 'Kafka defaults (election 1000 ms, fetch 2000 ms)', targetMs: 2000 },
      failoverElection200: { ...summary(fast), props: fastProps, target: 'well under 1000 ms' },
    }));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:raft failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});

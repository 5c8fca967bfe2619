// bench/soak: a long run under mixed load with faults, to see that the brokers' memory, file
// descriptors and produce latency stay flat (issue 33).
//   npm run bench:soak                                   (90 s: a smoke run)
//   npm run bench:soak -- --seconds 1800                 (the 30-minute soak, by hand)
//   flags (or LOGLINE_SOAK_<NAME> in the environment): --seconds, --interval-seconds, --rate,
//   --fault-interval-seconds, --fault-seconds, --faults kill,pause|none, --out FILE
//   Ctrl-C (or SIGTERM) ends it early with the report so far.
//
// Three `logline server` nodes started by `logline verify`'s LocalCluster (src/verify), one topic
// (RF 3, min.insync.replicas 2, retention.bytes 2 MiB per partition in 1 MiB segments (Kafka's least), so the
// disk and the segment count stay bounded whatever the duration and segments roll and are deleted
// all along). Load, all on src/client, each loop bounded by the deadline:
//   - idempotent producers, acks=all, batches of 10 records of 512 bytes at a fixed total rate;
//     each send's latency is from the call to the acknowledgement (a send that fails or retries
//     past its deadline counts as an error, and its time is not in the percentiles);
//   - a transactional producer: three partitions per transaction, a tenth aborted;
//   - a KIP-848 consumer group (two members, read_committed, commits every two seconds);
//   - a share group member (KIP-932) accepting every record it gets.
// The nemesis (src/verify's) kills (then restarts) or pauses (then resumes) a node every fault
// interval, the faults in turn and the nodes round robin, so every third of a long run sees the
// same mix. Every interval the bench samples each node's RSS (/proc/PID/status VmRSS) and
// open file descriptors (/proc/PID/fd), and the interval's produce p50/p99/max and counts.
//
// Verdict, on the samples after a warm-up (a third of the run up to 5 minutes, at least one
// interval, and past each node's first restart in the first half of the run), split in
// thirds by time: per node, the median RSS of the last third at most max(1.3 x, +48 MiB) of the
// first third's, open fds at most max(1.25 x, +24); the median of the intervals' produce p99 in
// the last third at most 2 x the first third's + 50 ms; and acknowledged records per second in
// the last third at least half the first third's. A sample taken within one interval of the
// node's restart is left out (a fresh process is smaller, which would hide growth).
// Prints one JSON object on stdout (the samples and the verdict); progress on stderr.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Cluster, ClusterClient, ConsumerGroupMember, KafkaError, Outcome, Producer, committedPositions, fetchCommitted, listOffsets } from '../src/client/index.js';
import { ApiKey, ErrorCode } from '../src/protocol/index.js';
import { Histogram, Prng, partitionKey } from '../src/util/index.js';
import { HistoryRecorder, LocalCluster, runNemesis, type NemesisFault } from '../src/verify/index.js';
import { ACCEPT, ShareConsumer } from '../src/cli/share-consumer.js';

const say = (m: string): void => { process.stderr.write(`bench:soak ${m}\n`); };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (n: number, digits = 1): number => Number(n.toFixed(digits));
const MiB = 1024 * 1024;

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0 && process.argv[i + 1] !== undefined) return process.argv[i + 1]!;
  return process.env[`LOGLINE_SOAK_${name.toUpperCase().replace(/-/g, '_')}`] ?? fallback;
}
function number(name: string, fallback: number, min: number, max: number): number {
  const v = Number(option(name, String(fallback)));
  if (!Number.isFinite(v) || v < min || v > max) throw new Error(`--${name}: a number from ${min} to ${max}`);
  return v;
}

const SECONDS = number('seconds', 90, 10, 24 * 3600);
const INTERVAL_S = number('interval-seconds', SECONDS >= 600 ? 30 : 5, 1, 3600);
const RATE = number('rate', 400, 10, 100_000);
const FAULT_INTERVAL_S = number('fault-interval-seconds', SECONDS >= 600 ? 60 : 15, 1, 3600);
const FAULT_S = number('fault-seconds', 5, 1, 600);
const FAULTS = option('faults', 'kill,pause').split(',').filter((f) => f !== 'none' && f !== '') as NemesisFault[];
const OUT = option('out', '');
const TOPIC = 'soak';
const PARTITIONS = 6;
const BATCH = 10;
const RECORD_BYTES = 512;
const PRODUCERS = 2;
const CONSUMERS = 2;
const OPERATION_TIMEOUT_MS = 30_000;
/** The warm-up is a third of the run, at most this: by then retention has filled each partition (2 MiB at ~35 KiB/s: a minute). */
const WARMUP_MAX_S = 300;

/** What the load did in one interval. */
class IntervalStats {
  produceUs = new Histogram();
  acked = 0;
  produceErrors = 0;
  txnCommitted = 0;
  txnAborted = 0;
  txnFailed = 0;
  consumed = 0;
  groupErrors = 0;
  shareAccepted = 0;
  shareErrors = 0;
}

interface NodeSample { id: number; pid: number | null; rssMiB: number | null; fds: number | null; restartedWithinInterval: boolean }
interface Sample {
  tS: number;
  nodes: NodeSample[];
  produce: { acked: number; perSecond: number; errors: number; p50Ms: number; p99Ms: number; maxMs: number };
  txn: { committed: number; aborted: number; failed: number };
  consumed: number; groupErrors: number; shareAccepted: number; shareErrors: number;
  faults: string[];
  /** This process (the clients): their connections show in the nodes' fds too. */
  benchRssMiB: number;
  benchFds: number;
}

function procStatus(pid: number): { rssMiB: number; fds: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
    return { rssMiB: round(kb / 1024), fds: readdirSync(`/proc/${pid}/fd`).length };
  } catch {
    return null; // gone between the check and the read (a kill)
  }
}

const median = (xs: number[]): number | null => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)]!;
};

interface Check { what: string; first: number | null; last: number | null; bound: number | null; ok: boolean }

/** The flatness verdict (see the header). */
function verdict(samples: Sample[], warmupS: number): { ok: boolean; checks: Check[]; samplesUsed: number } {
  const used = samples.filter((s) => s.tS >= warmupS);
  const checks: Check[] = [];
  if (used.length < 3) return { ok: false, checks: [{ what: `at least 3 samples after the ${warmupS} s warm-up`, first: null, last: null, bound: null, ok: false }], samplesUsed: used.length };
  const t0 = used[0]!.tS;
  const span = used.at(-1)!.tS - t0 || 1;
  const first = used.filter((s) => s.tS - t0 <= span / 3);
  const last = used.filter((s) => s.tS - t0 >= (2 * span) / 3);
  const add = (what: string, a: number | null, b: number | null, bound: (a: number) => number, higherIsWorse = true) => {
    if (a === null || b === null) { checks.push({ what, first: a, last: b, bound: null, ok: true }); return; }
    const limit = round(bound(a), 2);
    checks.push({ what, first: a, last: b, bound: limit, ok: higherIsWorse ? b <= limit : b >= limit });
  };
  for (const id of used[0]!.nodes.map((n) => n.id)) {
    const of = (ss: Sample[], k: 'rssMiB' | 'fds') => median(ss.flatMap((s) => s.nodes.filter((n) => n.id === id && !n.restartedWithinInterval && n[k] !== null).map((n) => n[k]!)));
    add(`node ${id} RSS MiB (median)`, of(first, 'rssMiB'), of(last, 'rssMiB'), (a) => Math.max(a * 1.3, a + 48));
    add(`node ${id} open fds (median)`, of(first, 'fds'), of(last, 'fds'), (a) => Math.max(a * 1.25, a + 24));
  }
  const p99 = (ss: Sample[]) => median(ss.filter((s) => s.produce.acked > 0).map((s) => s.produce.p99Ms));
  add('produce p99 ms (median of intervals)', p99(first), p99(last), (a) => 2 * a + 50);
  const rate = (ss: Sample[]) => median(ss.map((s) => s.produce.perSecond));
  add('acknowledged records/s (median of intervals)', rate(first), rate(last), (a) => a / 2, false);
  return { ok: checks.every((c) => c.ok), checks, samplesUsed: used.length };
}

async function createTopic(bootstrap: string): Promise<void> {
  const client = new ClusterClient({ bootstrap, requestTimeoutMs: 30_000 });
  try {
    const r = await client.admin(ApiKey.CreateTopics, {
      topics: [{
        name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 3, assignments: [], configs: [
          { name: 'min.insync.replicas', value: '2' }, { name: 'retention.bytes', value: String(2 * MiB) }, { name: 'segment.bytes', value: String(MiB) },
        ],
      }], timeoutMs: 30_000, validateOnly: false,
    }, 7);
    if (r.topics[0].errorCode !== 0) throw new KafkaError(r.topics[0].errorCode, r.topics[0].errorMessage ?? 'create');
    await client.retrying(() => client.topic(TOPIC));
    // The share group starts at the beginning of the topic, so it has work from the start.
    const any = await client.any();
    await any.send(ApiKey.IncrementalAlterConfigs, 1, { resources: [{ resourceType: 32, resourceName: 'soak-share', configs: [{ name: 'share.auto.offset.reset', configOperation: 0, value: 'earliest' }] }], validateOnly: false });
  } finally {
    client.close();
  }
}

async function producerLoop(bootstrap: string, index: number, stats: () => IntervalStats, stopped: () => boolean): Promise<void> {
  const cluster = new Cluster({ bootstrap, requestTimeoutMs: 10_000, clientId: `soak-producer-${index}` });
  const producer = new Producer(cluster, { transactionalId: null, transactionTimeoutMs: 60_000, deliveryTimeoutMs: OPERATION_TIMEOUT_MS });
  const value = Buffer.alloc(RECORD_BYTES, 0x61 + index);
  const periodMs = 1000 / (RATE / PRODUCERS / BATCH);
  let due = performance.now();
  let partition = index;
  try {
    while (!stopped()) {
      if (!producer.ready) {
        try { await producer.init(Date.now() + OPERATION_TIMEOUT_MS); } catch { await sleep(500); continue; }
      }
      partition = (partition + 1) % PARTITIONS;
      const start = performance.now();
      try {
        await producer.send(TOPIC, partition, Array.from({ length: BATCH }, () => ({ key: null, value })), Date.now() + OPERATION_TIMEOUT_MS);
        const s = stats();
        s.produceUs.record(Math.round((performance.now() - start) * 1000));
        s.acked += BATCH;
      } catch (err) {
        stats().produceErrors++;
        if (!(err instanceof Outcome) || err.reinit) await producer.init(Date.now() + OPERATION_TIMEOUT_MS).catch(() => {});
      }
      due += periodMs;
      const now = performance.now();
      if (due < now - 5000) due = now; // far behind after a fault: start the schedule again rather than burst
      if (due > now) await sleep(due - now);
    }
  } finally {
    cluster.close();
  }
}

async function txnLoop(bootstrap: string, stats: () => IntervalStats, stopped: () => boolean): Promise<void> {
  const cluster = new Cluster({ bootstrap, requestTimeoutMs: 10_000, clientId: 'soak-txn' });
  const producer = new Producer(cluster, { transactionalId: 'soak-txn', transactionTimeoutMs: 60_000, deliveryTimeoutMs: OPERATION_TIMEOUT_MS });
  const prng = new Prng(33);
  const value = Buffer.alloc(RECORD_BYTES, 0x74);
  try {
    while (!stopped()) {
      if (!producer.ready) {
        try { await producer.init(Date.now() + OPERATION_TIMEOUT_MS); } catch { await sleep(500); continue; }
      }
      const first = prng.int(PARTITIONS);
      const partitions = [first, (first + 2) % PARTITIONS, (first + 4) % PARTITIONS];
      const commit = prng.next() >= 0.1;
      const deadline = Date.now() + OPERATION_TIMEOUT_MS;
      try {
        await producer.addPartitions(new Map([[TOPIC, partitions]]), deadline);
        for (const p of partitions) await producer.send(TOPIC, p, [{ key: null, value }], deadline);
        await producer.end(commit, deadline);
        if (commit) stats().txnCommitted++;
        else stats().txnAborted++;
      } catch (err) {
        stats().txnFailed++;
        const aborted = await producer.end(false, Date.now() + OPERATION_TIMEOUT_MS).then(() => true, () => false);
        if (!aborted || (err instanceof Outcome && err.reinit) || !(err instanceof Outcome)) await producer.init(Date.now() + OPERATION_TIMEOUT_MS).catch(() => {});
      }
      await sleep(100);
    }
  } finally {
    cluster.close();
  }
}

/** A KIP-848 member: resumes new partitions at the committed offsets, commits every two seconds and before it lets a partition go. */
async function groupLoop(bootstrap: string, index: number, stats: () => IntervalStats, stopped: () => boolean): Promise<void> {
  const cluster = new Cluster({ bootstrap, requestTimeoutMs: 10_000, clientId: `soak-member-${index}` });
  const member = new ConsumerGroupMember(cluster, 'soak-group', [TOPIC], { rebalanceTimeoutMs: 60_000 });
  const positions = new Map<number, number>();
  let target: number[] | null = null;
  let nextHeartbeat = 0;
  let nextCommit = Date.now() + 2000;
  const commit = (which: Map<number, number>) => which.size === 0 ? Promise.resolve() : member.commit(TOPIC, which, Date.now() + OPERATION_TIMEOUT_MS).catch(() => { stats().groupErrors++; });
  try {
    while (!stopped()) {
      try {
        if (Date.now() >= nextHeartbeat) {
          const r = await member.heartbeat(Date.now() + OPERATION_TIMEOUT_MS);
          if (r.rejoined) positions.clear();
          if (r.assignment !== null) target = r.assignment.get(TOPIC) ?? [];
          nextHeartbeat = Date.now() + Math.min(member.intervalMs, 1000);
        }
        if (target !== null && (target.length !== positions.size || target.some((p) => !positions.has(p)))) {
          const keep = new Set(target);
          const revoked = new Map([...positions].filter(([p]) => !keep.has(p)));
          await commit(revoked);
          for (const p of revoked.keys()) positions.delete(p);
          const added = target.filter((p) => !positions.has(p));
          if (added.length > 0) {
            const committed = await committedPositions(cluster, 'soak-group', TOPIC, Date.now() + OPERATION_TIMEOUT_MS);
            for (const p of added) positions.set(p, committed.get(p) ?? 0);
          }
          member.reconciled(new Map([[TOPIC, [...positions.keys()]]]));
          nextHeartbeat = 0;
        }
        if (positions.size === 0) { await sleep(200); continue; }
        for (const f of await fetchCommitted(cluster, new Map([[TOPIC, positions]]), { maxWaitMs: 200 })) {
          if (!positions.has(f.partition)) continue;
          stats().consumed += f.records.length;
          positions.set(f.partition, f.next);
        }
        if (Date.now() >= nextCommit) { await commit(new Map(positions)); nextCommit = Date.now() + 2000; }
      } catch (err) {
        stats().groupErrors++;
        // Retention overtook a member that stalled: on from each partition's log start (auto.offset.reset=earliest).
        if (err instanceof KafkaError && err.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) {
          const starts = await listOffsets(cluster.client, [...positions.keys()].map((partition) => ({ topic: TOPIC, partition })), -2n).catch(() => null);
          for (const [p, at] of positions) positions.set(p, Math.max(at, Number(starts?.get(partitionKey(TOPIC, p)) ?? 0)));
        }
        await sleep(500);
      }
    }
    await commit(new Map(positions));
    await member.leave(Date.now() + 10_000);
  } finally {
    cluster.close();
  }
}

async function shareLoop(bootstrap: string, stats: () => IntervalStats, stopped: () => boolean): Promise<void> {
  while (!stopped()) {
    const client = new ClusterClient({ bootstrap, requestTimeoutMs: 10_000, clientId: 'soak-share' });
    const consumer = new ShareConsumer(client, 'soak-share', [TOPIC]);
    try {
      await consumer.subscribe();
      while (!stopped()) {
        const records = await consumer.poll(200);
        for (const r of records) consumer.acknowledge(r, ACCEPT);
        stats().shareAccepted += records.length;
      }
    } catch {
      stats().shareErrors++;
      await sleep(1000);
    } finally {
      await consumer.close().catch(() => {});
      client.close();
    }
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  say(`${SECONDS} s, samples every ${INTERVAL_S} s, ${RATE} records/s idempotent, faults ${FAULTS.join(',') || 'none'} every ${FAULT_INTERVAL_S} s for ${FAULT_S} s`);
  const cluster = await LocalCluster.start({ nodes: 3, settings: ['log.retention.check.interval.ms=5000', 'log.segment.delete.delay.ms=1000'] });
  const samples: Sample[] = [];
  let stats = new IntervalStats();
  const current = () => stats;
  let stop = false;
  const stopped = () => stop;
  const h = new HistoryRecorder(() => Math.round(performance.now() - started));
  // Each node's last start, to leave fresh processes out of the verdict.
  const startedAt = new Map<number, { pid: number | null; atS: number }>();
  const firstRestart = new Map<number, number>();
  // Ctrl-C or SIGTERM ends the run early: the load stops, the report covers the samples so far, and the nodes are stopped.
  const onSignal = () => { say('stopping early'); stop = true; };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await createTopic(cluster.bootstrap);
    const loadStart = performance.now();
    const tS = () => round((performance.now() - loadStart) / 1000);
    const loops = [
      ...Array.from({ length: PRODUCERS }, (_, i) => producerLoop(cluster.bootstrap, i, current, stopped)),
      txnLoop(cluster.bootstrap, current, stopped),
      ...Array.from({ length: CONSUMERS }, (_, i) => groupLoop(cluster.bootstrap, i, current, stopped)),
      shareLoop(cluster.bootstrap, current, stopped),
    ];
    const nemesis = runNemesis(cluster, { faults: FAULTS, intervalMs: FAULT_INTERVAL_S * 1000, durationMs: FAULT_S * 1000, faultsMax: 10_000, seed: 33, order: 'cycle' }, h, stopped);
    let faultsSeen = 0;
    for (let i = 1; i * INTERVAL_S <= SECONDS && !stop; i++) {
      for (const end = loadStart + i * INTERVAL_S * 1000; performance.now() < end && !stop;) await sleep(Math.min(200, end - performance.now()));
      if (stop) break;
      const s = stats;
      stats = new IntervalStats();
      const now = tS();
      const nodes = cluster.nodes.map((n): NodeSample => {
        const pid = n.child !== null && n.child.exitCode === null && n.child.signalCode === null ? n.child.pid ?? null : null;
        const last = startedAt.get(n.id);
        if (pid !== null && last?.pid !== pid) {
          startedAt.set(n.id, { pid, atS: last === undefined ? 0 : now });
          if (last !== undefined && !firstRestart.has(n.id)) firstRestart.set(n.id, now);
        }
        const st = pid === null ? null : procStatus(pid);
        return { id: n.id, pid, rssMiB: st?.rssMiB ?? null, fds: st?.fds ?? null, restartedWithinInterval: startedAt.get(n.id)!.atS > 0 && now - startedAt.get(n.id)!.atS <= INTERVAL_S * 1.5 };
      });
      const faults = h.ops.slice(faultsSeen).filter((op) => op.type === 'invoke').map((op) => `${op.f} ${op.node}`);
      faultsSeen = h.ops.length;
      const sample: Sample = {
        tS: now, nodes,
        produce: { acked: s.acked, perSecond: round(s.acked / INTERVAL_S), errors: s.produceErrors, p50Ms: round(s.produceUs.percentile(50) / 1000, 2), p99Ms: round(s.produceUs.percentile(99) / 1000, 2), maxMs: round((s.produceUs.total ? s.produceUs.max : 0) / 1000, 2) },
        txn: { committed: s.txnCommitted, aborted: s.txnAborted, failed: s.txnFailed },
        consumed: s.consumed, groupErrors: s.groupErrors, shareAccepted: s.shareAccepted, shareErrors: s.shareErrors, faults,
        benchRssMiB: round(process.memoryUsage().rss / MiB), benchFds: readdirSync('/proc/self/fd').length,
      };
      samples.push(sample);
      say(`t=${now}s rss ${nodes.map((n) => n.rssMiB ?? '-').join('/')} MiB fds ${nodes.map((n) => n.fds ?? '-').join('/')} produce ${sample.produce.perSecond}/s p50 ${sample.produce.p50Ms} p99 ${sample.produce.p99Ms} ms errors ${s.produceErrors} consumed ${s.consumed} share ${s.shareAccepted} ${faults.join(', ')}`);
    }
    stop = true;
    await Promise.all([...loops, nemesis]);
    // A node restarted on its data opens every segment of every partition it hosts (the internal
    // topics' 50 partitions included), where a fresh node opens them as they are first written:
    // hundreds of fds more. So the warm-up also lasts until every node that will be killed in the
    // first half has been restarted once, so both thirds compare processes in the same regime.
    const firstRestarts = [...firstRestart.values()].filter((at) => at <= SECONDS / 2);
    const warmupS = round(Math.max(INTERVAL_S, Math.min(WARMUP_MAX_S, SECONDS / 3), ...firstRestarts.map((at) => at + INTERVAL_S * 1.5)));
    const v = verdict(samples, warmupS);
    const report = {
      bench: 'soak', seconds: SECONDS, intervalSeconds: INTERVAL_S, rate: RATE, faults: FAULTS, faultIntervalSeconds: FAULT_INTERVAL_S, faultSeconds: FAULT_S,
      warmupSeconds: warmupS, loadAverage: (await import('node:os')).loadavg().map((x) => round(x, 2)),
      totals: {
        acked: samples.reduce((a, s) => a + s.produce.acked, 0), produceErrors: samples.reduce((a, s) => a + s.produce.errors, 0),
        txnCommitted: samples.reduce((a, s) => a + s.txn.committed, 0), consumed: samples.reduce((a, s) => a + s.consumed, 0),
        shareAccepted: samples.reduce((a, s) => a + s.shareAccepted, 0), faults: h.ops.filter((op) => op.type === 'invoke').map((op) => `${op.f} ${op.node}`),
      },
      // A fault step that did not work (a node that did not come back: its error carries the end of the node's output).
      faultErrors: h.ops.filter((op) => op.error !== undefined).map((op) => ({ atS: round(op.timeMs / 1000), step: op.f, node: op.node, error: op.error })),
      verdict: v, samples,
    };
    const json = JSON.stringify(report, null, 1);
    if (OUT !== '') writeFileSync(OUT, json + '\n');
    process.stdout.write(json + '\n');
    for (const e of report.faultErrors) say(`fault step failed: ${e.step} node ${e.node} at ${e.atS} s: ${e.error}`);
    say(`verdict: ${v.ok ? 'flat' : 'NOT FLAT'}: ${v.checks.map((c) => `${c.what} ${c.first} -> ${c.last} (bound ${c.bound}) ${c.ok ? 'ok' : 'FAIL'}`).join('; ')}`);
    process.exitCode = v.ok ? 0 : 1;
  } finally {
    stop = true;
    await cluster.close();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

await main();

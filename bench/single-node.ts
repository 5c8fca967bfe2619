// bench/single-node: one `logline server` process (fresh data directory, a free 127.0.0.1 port)
// under `logline bench` load, with the machine's own limits (bench/limits) measured in the same run.
//   npm run bench:single-node [-- --quick] [-- --only maxRate,latency]   (one JSON object on stdout, progress on stderr)
//   LOGLINE_BENCH_DIR=/path npm run bench:single-node   (data directory elsewhere; default the tmpdir)
//
// Scenarios: idle; 1) max rate: 1 topic x 100 partitions, 1 KiB records, acks=1, no compression, one
// producer (and a librdkafka producer when @confluentinc/kafka-javascript is installed); 2) the
// same with acks=all, lz4, zstd, 4 producers; 3) produce and end-to-end latency at 50 MB/s; 4)
// catch-up consume of a 4 GiB backlog, without and with a group; 5) overload: producers at full
// speed while a consumer reads slowly; 6) scale: 100 topics x 100 partitions (RSS, open fds,
// Metadata for all, idle CPU) and 1,000 concurrent connections. Every result carries the broker's
// CPU (from /proc/<pid>/stat, % of one core) and RSS. --quick shortens every scenario.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterClient, BrokerConnection } from '../src/client/index.js';
import { ApiKey, ZERO_UUID } from '../src/protocol/index.js';
import { buildRecordBatchSync, crc32cImplementation } from '../src/records/index.js';
import { Histogram, freePort } from '../src/util/index.js';
import { loopbackTcpGBps, sequentialWriteMBps } from './limits.js';
import { rdkafkaAvailable } from './rdkafka-load.js';
import { settleDirtyPages } from './settle.js';
import { rdkafkaPerfBinary, runRdkafkaPerf } from './rdkafka-perf.js';

const MiB = 1024 * 1024;
const quick = process.argv.includes('--quick');
/** `--only maxRate,latency`: run just these scenarios (idle, maxRate, rdkafka, variants, latency, catchUp, overload, scale). */
const SCENARIOS = ['idle', 'maxRate', 'rdkafka', 'variants', 'latency', 'catchUp', 'overload', 'scale'] as const;
const onlyArg = process.argv.indexOf('--only') >= 0 ? process.argv[process.argv.indexOf('--only') + 1] ?? '' : null;
const only = onlyArg === null ? null : onlyArg.split(',');
if (only) for (const o of only) if (!(SCENARIOS as readonly string[]).includes(o)) throw new Error(`--only: unknown scenario ${o} (${SCENARIOS.join(', ')})`);
const runs = (scenario: typeof SCENARIOS[number]): boolean => only === null || only.includes(scenario);
const say = (m: string): void => { process.stderr.write(`bench:single-node ${m}\n`); };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
const CLOCK_TICKS_PER_SEC = 100; // Linux USER_HZ; `getconf CLK_TCK` is 100 on every mainstream distribution

/** Scenario sizes: full runs, and --quick ones for a smoke run. */
const size = quick
  ? { maxRateRecords: 200_000, variantRecords: 100_000, latencySeconds: 10, backlogBytes: 256 * MiB, overloadSeconds: 10, idleMs: 2000, limitsSeconds: 1, writeBytes: 512 * MiB }
  : { maxRateRecords: 2_000_000, variantRecords: 1_000_000, latencySeconds: 60, backlogBytes: 4096 * MiB, overloadSeconds: 60, idleMs: 5000, limitsSeconds: 3, writeBytes: 2048 * MiB };

interface Broker { child: ChildProcess; pid: number; bootstrap: string }

async function startBroker(dataDir: string): Promise<Broker> {
  const port = await freePort();
  // LOGLINE_BENCH_BROKER_NODE_ARGS: node options for the broker (--cpu-prof, --trace-gc, ...).
  const nodeArgs = (process.env['LOGLINE_BENCH_BROKER_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '');
  const child = spawn(process.execPath, [...nodeArgs, 'bin/logline.js', 'server', '--data-dir', dataDir, '--listeners', `PLAINTEXT://127.0.0.1:${port}`,
    // Retention every 5 s (Kafka's default is 5 min) so the overload scenario's retention.bytes keeps the disk bounded.
    '--set', 'log.retention.check.interval.ms=5000', '--set', 'http.listener=127.0.0.1:0', '--set', 'schema.registry.listener=127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`broker did not start: ${out}`)), 30_000);
    const onData = (d: Buffer) => { out += d; if (out.includes('listening on')) { clearTimeout(timer); resolve(); } };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`broker exited with ${code}: ${out}`)); });
  });
  child.stdout!.resume();
  child.stderr!.on('data', (d) => process.stderr.write(`[broker] ${d}`));
  return { child, pid: child.pid!, bootstrap: `127.0.0.1:${port}` };
}

async function stopBroker(b: Broker): Promise<void> {
  if (b.child.exitCode !== null) return;
  const exited = new Promise((r) => b.child.once('exit', r));
  b.child.kill('SIGTERM');
  const timer = setTimeout(() => b.child.kill('SIGKILL'), 60_000);
  await exited;
  clearTimeout(timer);
}

/** CPU time (user + system, seconds), RSS (MiB) and open file descriptors of a process. */
function procSample(pid: number): { cpuSeconds: number; rssMiB: number; fds: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SEC; // utime, stime (fields 14, 15)
  const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuSeconds, rssMiB: rss ? round(Number(rss[1]) / 1024) : 0, fds: readdirSync(`/proc/${pid}/fd`).length };
}

interface Usage { cpuPercentOfOneCore: number; rssMiBPeak: number; rssMiBEnd: number; fdsEnd: number; wallSeconds: number }

/** Runs `fn` while sampling the broker every 250 ms: its CPU share over the run and its RSS. */
async function withUsage<T>(pid: number, fn: () => Promise<T>): Promise<[T, Usage]> {
  const before = procSample(pid);
  const t0 = performance.now();
  let peak = before.rssMiB;
  const timer = setInterval(() => { peak = Math.max(peak, procSample(pid).rssMiB); }, 250);
  try {
    const value = await fn();
    const after = procSample(pid);
    const wallSeconds = (performance.now() - t0) / 1000;
    return [value, { cpuPercentOfOneCore: round((after.cpuSeconds - before.cpuSeconds) / wallSeconds * 100), rssMiBPeak: Math.max(peak, after.rssMiB), rssMiBEnd: after.rssMiB, fdsEnd: after.fds, wallSeconds: round(wallSeconds, 2) }];
  } finally {
    clearInterval(timer);
  }
}

interface BenchRun { code: number | null; summary: any; progress: any[]; stderr: string }

/** `logline bench <args> --json` as a child process; progress lines (JSON) collected with their arrival time. */
function runBench(b: Broker, args: string[], onProgress: (p: any) => void = () => {}): Promise<BenchRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/logline.js', 'bench', ...args, '--json', '--bootstrap-server', b.bootstrap, '--max-seconds', '900'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let partial = '';
    const progress: any[] = [];
    child.stdout!.on('data', (d) => { stdout += d; });
    child.stderr!.on('data', (d) => {
      partial += d;
      const lines = partial.split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        if (line.startsWith('{')) { const p = JSON.parse(line); progress.push(p); onProgress(p); process.stderr.write(`  ${p.progress} ${p.seconds}s ${p.recordsPerSec} rec/s ${p.wireMbPerSec} MB/s p99 ${p.intervalLatencyMsP99} ms\n`); } else stderr += `${line}\n`;
      }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 1000 * 1000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      let summary: any = null;
      try { summary = JSON.parse(stdout); } catch { summary = { error: `no JSON summary: ${stdout.slice(0, 200)} ${stderr.slice(0, 500)}` }; }
      resolve({ code, summary, progress, stderr });
    });
  });
}

function runRdkafka(b: Broker, topic: string, records: number, acks: number): Promise<any> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['dist/bench/rdkafka-load.js', '--bootstrap', b.bootstrap, '--topic', topic, '--records', String(records), '--size', '1024', '--acks', String(acks), '--max-seconds', '600'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (d) => { out += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 700_000);
    child.on('exit', (code) => { clearTimeout(timer); try { resolve(JSON.parse(out)); } catch { resolve({ error: `rdkafka-load exited with ${code}` }); } });
  });
}

async function createTopics(client: ClusterClient, names: string[], partitions: number, configs: Record<string, string> = {}): Promise<void> {
  const r = await client.admin(ApiKey.CreateTopics, {
    topics: names.map((name) => ({ name, numPartitions: partitions, replicationFactor: -1, assignments: [], configs: Object.entries(configs).map(([n, value]) => ({ name: n, value })) })),
    timeoutMs: 120_000, validateOnly: false,
  }, 7);
  for (const t of r.topics) if (t.errorCode !== 0) throw new Error(`CreateTopics ${t.name}: error ${t.errorCode} ${t.errorMessage ?? ''}`);
  for (const n of names) await client.topic(n);
}

async function deleteTopic(client: ClusterClient, name: string): Promise<void> {
  await client.admin(ApiKey.DeleteTopics, { topics: [{ name, topicId: ZERO_UUID }], topicNames: [name], timeoutMs: 60_000 }, 6);
}

const RECORD = ['--record-size', '1024'];

async function produceScenario(b: Broker, client: ClusterClient, topic: string, args: string[]): Promise<Record<string, unknown>> {
  await createTopics(client, [topic], 100);
  say(`${topic}: logline bench produce ${args.join(' ')}`);
  const [run, usage] = await withUsage(b.pid, () => runBench(b, ['produce', '--topic', topic, ...RECORD, ...args, '--quiet']));
  await deleteTopic(client, topic);
  return { command: `logline bench produce --topic ${topic} ${RECORD.join(' ')} ${args.join(' ')}`, ...pick(run.summary), broker: usage };
}

function pick(s: any): Record<string, unknown> {
  if (!s || s.error) return { error: s?.error ?? 'no summary' };
  const out: Record<string, unknown> = { records: s.records, seconds: s.seconds, recordsPerSec: s.recordsPerSec, mbPerSec: s.mbPerSec };
  for (const k of ['wireMbPerSec', 'latencyMs', 'e2eLatencyMs', 'targetReached']) if (k in s) out[k] = s[k];
  return out;
}

async function scale(b: Broker, client: ClusterClient): Promise<Record<string, unknown>> {
  const names = Array.from({ length: 100 }, (_, i) => `scale-${String(i).padStart(3, '0')}`);
  const t0 = performance.now();
  for (let i = 0; i < names.length; i += 10) await createTopics(client, names.slice(i, i + 10), 100);
  const createSeconds = (performance.now() - t0) / 1000;
  await sleep(size.idleMs);
  const [, idle] = await withUsage(b.pid, () => sleep(size.idleMs));
  const conn = await client.any();
  const metadataMs = new Histogram();
  let partitions = 0;
  for (let i = 0; i < 20; i++) {
    const t = performance.now();
    const r = await conn.send(ApiKey.Metadata, conn.version(ApiKey.Metadata, 12), { topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false });
    metadataMs.record((performance.now() - t) * 1000);
    partitions = r.topics.reduce((a: number, t: any) => a + t.partitions.length, 0);
  }
  const produced = await produceToAll(b, conn, names, 100);
  const after = procSample(b.pid);
  say(`scale: 1,000 connections`);
  const [host, port] = [b.bootstrap.split(':')[0]!, Number(b.bootstrap.split(':')[1])];
  const conns: BrokerConnection[] = [];
  const [answered, connUsage] = await withUsage(b.pid, async () => {
    for (let i = 0; i < 1000; i += 100) conns.push(...await Promise.all(Array.from({ length: 100 }, () => BrokerConnection.open({ host, port, clientId: 'scale' }))));
    const t = performance.now();
    const all = await Promise.all(conns.map((c) => c.send(ApiKey.ApiVersions, 3, { clientSoftwareName: 'bench', clientSoftwareVersion: '1' })));
    return { ok: all.filter((r) => r.errorCode === 0).length, allAnsweredMs: round(performance.now() - t) };
  });
  const withConnections = procSample(b.pid);
  for (const c of conns) c.close();
  return {
    topics: names.length, partitions, createSeconds: round(createSeconds, 2),
    produceToAll: produced,
    rssMiB: after.rssMiB, openFds: after.fds,
    metadataAllTopicsMs: { p50: metadataMs.percentile(50) / 1000, max: metadataMs.max / 1000, requests: metadataMs.total },
    idleWith10kPartitions: { cpuPercentOfOneCore: idle.cpuPercentOfOneCore, rssMiB: idle.rssMiBEnd },
    connections: { opened: conns.length, apiVersionsAnswered: answered.ok, allAnsweredMs: answered.allAnsweredMs, rssMiB: withConnections.rssMiB, openFds: withConnections.fds, broker: connUsage },
  };
}

/**
 * Produces to every partition of `topics` (one request per topic carrying all its partitions, the
 * same 10 x 1 KiB batch in each, up to 8 requests in flight), `rounds` times over.
 */
async function produceToAll(b: Broker, conn: BrokerConnection, topics: string[], partitions: number, rounds = quick ? 2 : 5): Promise<Record<string, unknown>> {
  say(`scale: producing to all ${topics.length * partitions} partitions, ${rounds} rounds`);
  const value = Buffer.alloc(1024, 0x61);
  const batch = buildRecordBatchSync({ records: Array.from({ length: 10 }, () => ({ key: null, value })) });
  const latencyUs = new Histogram();
  let failed = 0;
  const [, usage] = await withUsage(b.pid, async () => {
    const inFlight = new Set<Promise<void>>();
    for (let round = 0; round < rounds; round++) {
      for (const name of topics) {
        const sent = performance.now();
        const p: Promise<void> = conn.send(ApiKey.Produce, 9, {
          transactionalId: null, acks: 1, timeoutMs: 30_000,
          topicData: [{ name, partitionData: Array.from({ length: partitions }, (_, index) => ({ index, records: batch })) }],
        }).then((r) => {
          latencyUs.record((performance.now() - sent) * 1000);
          for (const pr of r.responses[0].partitionResponses) if (pr.errorCode !== 0) failed++;
        }).finally(() => inFlight.delete(p));
        inFlight.add(p);
        if (inFlight.size >= 8) await Promise.race(inFlight);
      }
    }
    await Promise.all(inFlight);
  });
  const records = rounds * topics.length * partitions * 10;
  return {
    partitions: topics.length * partitions, records, failedPartitionWrites: failed,
    mbPerSec: round(records * batch.length / 10 / usage.wallSeconds / 1e6), requestLatencyMs: { p50: latencyUs.percentile(50) / 1000, p99: latencyUs.percentile(99) / 1000 },
    broker: usage,
  };
}

async function overload(b: Broker, client: ClusterClient): Promise<Record<string, unknown>> {
  const topic = 'overload';
  // Retention keeps the disk bounded while producers run flat out (100 x 64 MiB at most).
  await createTopics(client, [topic], 100, { 'retention.bytes': String(64 * MiB), 'segment.bytes': String(16 * MiB) });
  const timeline: { second: number; brokerRssMiB: number; brokerCpuPercent: number; produceMbPerSec: number | null; produceP99Ms: number | null; consumeRecordsPerSec: number | null }[] = [];
  let lastProduce: any = null;
  let lastConsume: any = null;
  let prev = procSample(b.pid);
  const t0 = performance.now();
  const sampler = setInterval(() => {
    const now = procSample(b.pid);
    timeline.push({
      second: Math.round((performance.now() - t0) / 1000), brokerRssMiB: now.rssMiB, brokerCpuPercent: round((now.cpuSeconds - prev.cpuSeconds) * 100),
      produceMbPerSec: lastProduce?.wireMbPerSec ?? null, produceP99Ms: lastProduce?.intervalLatencyMsP99 ?? null, consumeRecordsPerSec: lastConsume?.recordsPerSec ?? null,
    });
    prev = now;
  }, 1000);
  const seconds = String(size.overloadSeconds);
  const [[produced, consumed], usage] = await withUsage(b.pid, () => Promise.all([
    runBench(b, ['produce', '--topic', topic, ...RECORD, '--producers', '2', '--num-records', '1000000000', '--seconds', seconds], (p) => { lastProduce = p; }),
    runBench(b, ['consume', '--topic', topic, '--consume-throughput', '2000', '--fetch-max-bytes', '1048576', '--num-records', '1000000000', '--seconds', seconds], (p) => { lastConsume = p; }),
  ]));
  clearInterval(sampler);
  await deleteTopic(client, topic);
  return { command: `logline bench produce --producers 2 --seconds ${seconds} & logline bench consume --consume-throughput 2000 --fetch-max-bytes 1048576 --seconds ${seconds}`, produce: pick(produced.summary), consume: pick(consumed.summary), broker: usage, timeline };
}


async function main(): Promise<void> {
  const root = mkdtempSync(join(process.env.LOGLINE_BENCH_DIR ?? tmpdir(), 'logline-single-node-'));
  const os = await import('node:os');
  // The load average says how much else ran on the machine's cores around the run (the figures
  // are only as quiet as the machine was).
  const result: Record<string, any> = { bench: 'single-node', date: new Date().toISOString(), quick, only, node: process.version, cpus: os.cpus().length, crc32c: crc32cImplementation, loadAverageAtStart: os.loadavg().map((l) => round(l, 2)) };
  let broker: Broker | null = null;
  try {
    say('limits: loopback TCP and sequential write');
    const loopbackMBps = round((await loopbackTcpGBps(size.limitsSeconds)) * 1000);
    const pageCacheMBps = round(sequentialWriteMBps(root, size.writeBytes, false));
    const fsyncMBps = round(sequentialWriteMBps(root, size.writeBytes, true));
    const ceilingMBps = Math.min(loopbackMBps, pageCacheMBps);
    result.limits = { loopbackTcpMBps: loopbackMBps, pageCacheWriteMBps: pageCacheMBps, writeWithFsyncMBps: fsyncMBps, ceilingMBps };

    broker = await startBroker(join(root, 'data'));
    const b = broker;
    const client = new ClusterClient({ bootstrap: b.bootstrap, requestTimeoutMs: 120_000 });
    await sleep(1000);
    if (runs('idle')) {
      const [, idle] = await withUsage(b.pid, () => sleep(size.idleMs));
      result.idle = { cpuPercentOfOneCore: idle.cpuPercentOfOneCore, rssMiB: idle.rssMiBEnd, openFds: idle.fdsEnd };
    }

    const n1 = String(size.maxRateRecords);
    const n2 = String(size.variantRecords);
    if (runs('maxRate')) {
      result.maxRate = await produceScenario(b, client, 'max-rate', ['--acks', '1', '--compression', 'none', '--producers', '1', '--num-records', n1]);
      result.maxRate.ratioToCeiling = round(Number(result.maxRate.mbPerSec) / ceilingMBps, 3);
    }
    if (runs('rdkafka') && rdkafkaAvailable()) {
      // librdkafka from C when it can be built (the JS binding's per-message call is its own limit).
      await createTopics(client, ['max-rate-rdkafka'], 100);
      const fromC = rdkafkaPerfBinary() !== null;
      say(`max-rate-rdkafka: librdkafka producer${fromC ? ' (C)' : ' (through the JS binding)'}`);
      const [r, usage] = await withUsage(b.pid, () => fromC
        ? runRdkafkaPerf({ bootstrap: b.bootstrap, topic: 'max-rate-rdkafka', records: size.maxRateRecords, size: 1024, acks: 1, compression: 'none', maxSeconds: 600 })
        : runRdkafka(b, 'max-rate-rdkafka', size.maxRateRecords, 1));
      await deleteTopic(client, 'max-rate-rdkafka');
      const command = fromC ? `node dist/bench/rdkafka-perf.js --records ${n1} --size 1024 --acks 1` : `node dist/bench/rdkafka-load.js --records ${n1} --size 1024 --acks 1`;
      result.maxRateRdkafka = { command, ...r, broker: usage, ratioToCeiling: round(Number(r.mbPerSec) / ceilingMBps, 3) };
    } else if (runs('rdkafka')) {
      result.maxRateRdkafka = { skipped: '@confluentinc/kafka-javascript is not installed' };
    }
    if (runs('variants')) {
      result.variants = {
        acksAll: await produceScenario(b, client, 'acks-all', ['--acks', '-1', '--num-records', n2]),
        lz4: await produceScenario(b, client, 'lz4', ['--compression', 'lz4', '--num-records', n2]),
        zstd: await produceScenario(b, client, 'zstd', ['--compression', 'zstd', '--num-records', n2]),
        producers4: await produceScenario(b, client, 'producers-4', ['--producers', '4', '--num-records', n2]),
      };
      for (const v of Object.values(result.variants) as any[]) v.ratioToCeiling = round(Number(v.mbPerSec) / ceilingMBps, 3);
    }

    if (runs('latency')) {
      // 50 MB/s of 1 KiB records: 48,828 records/s; e2e gives produce and end-to-end latency at once.
      await createTopics(client, ['latency'], 100);
      const dirtyMiBAtStart = await settleDirtyPages(join(root, 'data'));
      const rate = String(Math.round(50e6 / 1024));
      const latencyArgs = ['--topic', 'latency', ...RECORD, '--throughput', rate, '--seconds', String(size.latencySeconds), '--num-records', String(Number(rate) * size.latencySeconds), '--linger-ms', '1'];
      say(`latency: logline bench e2e ${latencyArgs.join(' ')}`);
      const [lat, latUsage] = await withUsage(b.pid, () => runBench(b, ['e2e', ...latencyArgs, '--quiet']));
      await deleteTopic(client, 'latency');
      result.latencyAt50MBps = { command: `logline bench e2e ${latencyArgs.join(' ')}`, ...pick(lat.summary), broker: latUsage, dirtyMiBAtStart };
    }

    if (runs('catchUp')) {
      // Catch-up: a backlog written first (2 producers), then read from the beginning.
      const backlogRecords = String(Math.round(size.backlogBytes / 1024));
      await createTopics(client, ['backlog'], 100);
      say(`catch-up: writing ${size.backlogBytes / MiB} MiB`);
      const written = await runBench(b, ['produce', '--topic', 'backlog', ...RECORD, '--producers', '2', '--num-records', backlogRecords, '--quiet']);
      await settleDirtyPages(join(root, 'data'));
      say('catch-up: logline bench consume --topic backlog');
      const [plain, plainUsage] = await withUsage(b.pid, () => runBench(b, ['consume', '--topic', 'backlog', '--quiet']));
      const [grouped, groupedUsage] = await withUsage(b.pid, () => runBench(b, ['consume', '--topic', 'backlog', '--group', 'catch-up', '--quiet']));
      await deleteTopic(client, 'backlog');
      result.catchUp = {
        backlogMiB: size.backlogBytes / MiB, written: pick(written.summary),
        noGroup: { command: 'logline bench consume --topic backlog', ...pick(plain.summary), broker: plainUsage, ratioToLoopback: round(Number(plain.summary?.mbPerSec) / loopbackMBps, 3) },
        withGroup: { command: 'logline bench consume --topic backlog --group catch-up', ...pick(grouped.summary), broker: groupedUsage },
      };
    }
    if (runs('overload')) {
      say('overload: producers at full speed, a slow consumer');
      result.overload = await overload(b, client);
    }
    if (runs('scale')) {
      say('scale: 100 topics x 100 partitions');
      result.scale = await scale(b, client);
    }
    client.close();

    // A target whose scenario did not run (--only) is left out.
    const targets: Record<string, unknown> = {};
    if (result.maxRate) targets.maxRateAcks1 = { target: `>= 50% of ${ceilingMBps} MB/s and >= 500 MB/s`, measuredMBps: result.maxRate.mbPerSec, met: result.maxRate.mbPerSec >= 0.5 * ceilingMBps && result.maxRate.mbPerSec >= 500 };
    if (result.latencyAt50MBps) {
      targets.produceP99At50MBps = { target: '<= 5 ms', measuredMs: result.latencyAt50MBps.latencyMs?.p99, met: result.latencyAt50MBps.latencyMs?.p99 <= 5 };
      targets.e2eP99At50MBps = { target: '<= 10 ms', measuredMs: result.latencyAt50MBps.e2eLatencyMs?.p99, met: result.latencyAt50MBps.e2eLatencyMs?.p99 <= 10 };
      targets.e2eP999At50MBps = { target: '<= 25 ms', measuredMs: result.latencyAt50MBps.e2eLatencyMs?.['p99.9'], met: result.latencyAt50MBps.e2eLatencyMs?.['p99.9'] <= 25 };
    }
    if (result.catchUp) targets.catchUp = { target: '>= 1000 MB/s', measuredMBps: result.catchUp.noGroup.mbPerSec, met: result.catchUp.noGroup.mbPerSec >= 1000 };
    if (result.scale) {
      targets.rss10kPartitions = { target: '< 1024 MiB', measuredMiB: result.scale.rssMiB, met: result.scale.rssMiB < 1024 };
      targets.metadata10kPartitions = { target: '< 100 ms', measuredMs: result.scale.metadataAllTopicsMs.max, met: result.scale.metadataAllTopicsMs.max < 100 };
    }
    if (result.idle) {
      targets.idleRss = { target: '< 100 MiB', measuredMiB: result.idle.rssMiB, met: result.idle.rssMiB < 100 };
      targets.idleCpu = { target: 'no spin (< 2% of a core)', measuredPercent: result.idle.cpuPercentOfOneCore, met: result.idle.cpuPercentOfOneCore < 2 };
    }
    result.targets = targets;
    result.loadAverageAtEnd = os.loadavg().map((l) => round(l, 2));
  } finally {
    if (broker) await stopBroker(broker);
    rmSync(root, { recursive: true, force: true });
  }
  console.log(JSON.stringify(result, null, 2));
}

await main();

// What tiered storage (KIP-405) costs and gives, in one run against one `logline server` process
// with remote.log.storage.system.enable=true and the local directory backend
// (LocalTieredStorage): two topics of the same shape, one with remote.storage.enable=false ("off")
// and one with it on ("on", small segment.bytes and local.retention.bytes, so segments roll, are
// copied and are deleted locally while the measurement runs).
//   (a) produce: acks=1 throughput (`logline bench produce`, as fast as acknowledgements allow), off
//       and on alternated for --rounds; then produce latency at a fixed rate (--rate-mb MB/s,
//       --linger-ms 1, --latency-seconds) on each. Targets (issue 31): on >= 90% of off; p99 within
//       1 ms of off.
//   (b) catch-up read from offset 0 of the "on" topic's first --read-bytes, all of them below its
//       local log start (so every byte comes from the tier), against the same records of the "off"
//       topic read from local disk by the same `logline bench consume`. Target: >= 50%. With --s3,
//       the same read against an S3 API server (s3rver, as test/tiered/s3-server.ts starts it) on a
//       second broker; reported, no target.
//   (c) during the fixed-rate produce to "on" (and, reported, the max-rate ones): the partition's directory on disk, sampled every 100 ms
//       (allocated blocks of every file), must stay within local.retention.bytes + 2 segments (the
//       active segment and one rolled but not yet copied); the chunk cache in /v1/node within its
//       bound, sampled during the reads.
// JSON on stdout (progress on stderr). Defaults are small (~1 minute); the figures:
//   npm run bench:tiered -- --produce-bytes 2147483648 --read-bytes 2147483648 --latency-seconds 300 --rate-mb 50 --segment-bytes 67108864
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ServerProcesses, type ServerProcess } from './server-processes.js';
import { settleDirtyPages } from './settle.js';
import { ACCESS_KEY, BUCKET, SECRET, startS3Server, stopS3Server } from '../test/tiered/s3-helpers.js';

const args = process.argv.slice(2);
const arg = (name: string, dflt: number) => { const i = args.indexOf(name); return i >= 0 ? Number(args[i + 1]) : dflt; };
const MiB = 1024 * 1024;
const RECORD_BYTES = 1024;
const produceBytes = arg('--produce-bytes', 128 * MiB);
const readBytes = Math.min(arg('--read-bytes', 96 * MiB), produceBytes);
const segmentBytes = arg('--segment-bytes', 4 * MiB);
const localRetentionBytes = arg('--local-retention-bytes', 2 * segmentBytes);
const rateMb = arg('--rate-mb', 50);
const latencySeconds = arg('--latency-seconds', 10);
const rounds = arg('--rounds', 2);
const chunkCacheBytes = arg('--chunk-cache-bytes', 32 * MiB);
const s3 = args.includes('--s3');
const s3ReadBytes = arg('--s3-read-bytes', 32 * MiB);
const round = (x: number, digits = 2) => Number(x.toFixed(digits));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (m: string) => process.stderr.write(`[bench:tiered] ${m}\n`);

interface BenchSummary { recordsPerSec: number; mbPerSec: number; records: number; seconds: number; latencyMs?: { p50: number; p99: number; 'p99.9': number; max: number }; error?: string }

/** `logline ...` against the node; its stdout. */
function logline(node: ServerProcess, argv: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/logline.js', ...argv, '--bootstrap-server', `127.0.0.1:${node.brokerPort}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`logline ${argv.join(' ')}: exit ${code}: ${err.slice(-2000)}${out.slice(-2000)}`))));
  });
}

async function bench(node: ServerProcess, mode: 'produce' | 'consume', topic: string, extra: string[]): Promise<BenchSummary> {
  const out = await logline(node, ['bench', mode, '--topic', topic, '--record-size', String(RECORD_BYTES), ...extra, '--json', '--quiet', '--max-seconds', '3600']);
  const s = JSON.parse(out) as BenchSummary;
  if (s.error) throw new Error(`bench ${mode} ${topic}: ${s.error}`);
  return s;
}

function httpPort(node: ServerProcess): number {
  const port = Number(/http listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(node.log)?.[1]);
  if (!(port > 0)) throw new Error(`no http listener line in: ${node.log.slice(-2000)}`);
  return port;
}

async function getJson<T>(node: ServerProcess, path: string): Promise<T> {
  const r = await fetch(`http://127.0.0.1:${httpPort(node)}${path}`);
  if (!r.ok) throw new Error(`GET ${path}: ${r.status} ${await r.text()}`);
  return await r.json() as T;
}

interface Tiered { localLogStartOffset: number; remoteLogStartOffset: number | null; highestOffsetInRemoteStorage: number; remoteSizeBytes: number }
interface CacheStats { bytes: number; bytesMax: number }
const partition0 = async (node: ServerProcess, topic: string) =>
  (await getJson<{ partitions: { logEndOffset: number | null; tiered: Tiered | null }[] }>(node, `/v1/topics/${encodeURIComponent(topic)}`)).partitions[0]!;
const chunkCache = async (node: ServerProcess) => (await getJson<{ tiered: { chunkCache: CacheStats | null } | null }>(node, '/v1/node')).tiered?.chunkCache ?? null;

/**
 * Allocated bytes in a partition directory (sparse preallocated indexes count what they use): the
 * live log, and everything including segments deleted by retention that wait out
 * file.delete.delay.ms as .deleted files (60 s by default, as in Kafka).
 */
function allocatedBytes(dir: string): { live: number; all: number } {
  let live = 0;
  let all = 0;
  for (const name of readdirSync(dir)) {
    let n = 0;
    try { n = statSync(join(dir, name)).blocks * 512; } catch { /* deleted while listed */ }
    all += n;
    if (!name.endsWith('.deleted')) live += n;
  }
  return { live, all };
}

interface DiskMax { liveMaxBytes: number; allMaxBytes: number; samples: number }

/** Samples the partition directory's size every 100 ms while `work` runs; the largest seen. */
async function whileSampling<T>(dir: string, work: Promise<T>): Promise<{ result: T; disk: DiskMax }> {
  const disk: DiskMax = { liveMaxBytes: 0, allMaxBytes: 0, samples: 0 };
  const sample = () => {
    try {
      const b = allocatedBytes(dir);
      disk.liveMaxBytes = Math.max(disk.liveMaxBytes, b.live);
      disk.allMaxBytes = Math.max(disk.allMaxBytes, b.all);
      disk.samples++;
    } catch { /* not created yet */ }
  };
  let done = false;
  const sampler = (async () => {
    while (!done) { sample(); await sleep(100); }
  })();
  try {
    return { result: await work, disk };
  } finally {
    done = true;
    await sampler;
    sample();
  }
}

async function until(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(250);
  }
}

const brokerSettings = (backend: Record<string, string>): Record<string, string> => ({
  'remote.log.storage.system.enable': 'true',
  'remote.log.manager.task.interval.ms': '500',
  'log.retention.check.interval.ms': '500',
  'rlmm.config.remote.log.metadata.topic.num.partitions': '1',
  'rsm.config.fetch.chunk.cache.size': String(chunkCacheBytes),
  ...backend,
});

async function createTopic(node: ServerProcess, name: string, tiered: boolean): Promise<void> {
  const configs = tiered
    ? ['remote.storage.enable=true', `segment.bytes=${segmentBytes}`, `local.retention.bytes=${localRetentionBytes}`]
    : ['remote.storage.enable=false', `segment.bytes=${segmentBytes}`];
  await logline(node, ['topic', 'create', name, '--partitions', '1', ...configs.flatMap((c) => ['--config', c])]);
}

/** Waits until the topic's first `records` offsets are all below its local log start (read only from the tier). */
async function waitTiered(node: ServerProcess, topic: string, records: number): Promise<Tiered> {
  let last: Tiered | null = null;
  await until(`${topic}: offsets below ${records} to leave local disk`, 600_000, async () => {
    last = (await partition0(node, topic)).tiered;
    return last !== null && last.localLogStartOffset >= records && last.remoteLogStartOffset === 0;
  });
  return last!;
}

/** Reads `records` from offset 0 of the topic while sampling the chunk cache. */
async function readSampled(node: ServerProcess, topic: string, records: number): Promise<{ read: BenchSummary; cacheMaxBytes: number; cacheBoundBytes: number | null }> {
  let cacheMaxBytes = 0;
  let cacheBoundBytes: number | null = null;
  let done = false;
  const sampler = (async () => {
    while (!done) {
      const c = await chunkCache(node).catch(() => null);
      if (c !== null) { cacheMaxBytes = Math.max(cacheMaxBytes, c.bytes); cacheBoundBytes = c.bytesMax; }
      await sleep(100);
    }
  })();
  try {
    const read = await bench(node, 'consume', topic, ['--num-records', String(records)]);
    return { read, cacheMaxBytes, cacheBoundBytes };
  } finally {
    done = true;
    await sampler;
  }
}

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').trim();
const loadavgStart = loadavg();
const produceRecords = Math.floor(produceBytes / RECORD_BYTES);
const readRecords = Math.floor(readBytes / RECORD_BYTES);
const recordsPerSec = Math.round((rateMb * 1e6) / RECORD_BYTES);
const diskBoundBytes = localRetentionBytes + 2 * segmentBytes;
log(`produce ${produceRecords} x ${RECORD_BYTES} B per run, ${rounds} rounds; latency ${recordsPerSec} records/s for ${latencySeconds} s; segment ${segmentBytes}, local retention ${localRetentionBytes}`);

const cluster = await ServerProcesses.start(1, brokerSettings({ 'remote.log.storage.manager.class.name': 'org.apache.kafka.server.log.remote.storage.LocalTieredStorage' }));
const result: Record<string, unknown> = {
  bench: 'tiered', recordBytes: RECORD_BYTES, produceBytes, readBytes, segmentBytes, localRetentionBytes, rateMb, latencySeconds, rounds, chunkCacheBytes,
};
try {
  const node = cluster.nodes[0]!;
  const runs: { round: number; tiering: 'off' | 'on'; mbPerSec: number; p99Ms: number; disk?: DiskMax }[] = [];
  const diskMax = { live: 0, all: 0 };
  const noteDisk = (d: DiskMax | undefined) => { if (d !== undefined) { diskMax.live = Math.max(diskMax.live, d.liveMaxBytes); diskMax.all = Math.max(diskMax.all, d.allMaxBytes); } };
  // A warm-up run to a topic of its own, not measured. On this VM a process's first gigabytes of
  // writes land in pages earlier processes freed and run 2-5 times faster than later ones (a bare
  // writeSync loop: 1.1-1.9 GB/s for its first 2 GiB file, 310-540 MB/s for the next ones), so
  // without it round 0's first run was the fast one whatever its tiering.
  await createTopic(node, 'tiered-bench-warmup', false);
  await bench(node, 'produce', 'tiered-bench-warmup', ['--num-records', String(produceRecords), '--acks', '1']);
  for (let r = 0; r < rounds; r++) {
    // Alternated, the order swapped each round, so a drift in the machine's load falls on both.
    for (const tiering of (r % 2 === 0 ? ['off', 'on'] : ['on', 'off']) as ('off' | 'on')[]) {
      const topic = `tiered-bench-${tiering}-${r}`;
      await createTopic(node, topic, tiering === 'on');
      await settleDirtyPages(node.dir);
      const run = bench(node, 'produce', topic, ['--num-records', String(produceRecords), '--acks', '1']);
      const sampled = tiering === 'on' ? await whileSampling(join(node.dir, `${topic}-0`), run) : { result: await run, disk: undefined };
      const x = { round: r, tiering, mbPerSec: sampled.result.mbPerSec, p99Ms: sampled.result.latencyMs!.p99, ...(sampled.disk !== undefined ? { disk: sampled.disk } : {}) };
      log(JSON.stringify(x));
      runs.push(x);
    }
  }
  const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2; };
  const offMb = median(runs.filter((x) => x.tiering === 'off').map((x) => x.mbPerSec));
  const onMb = median(runs.filter((x) => x.tiering === 'on').map((x) => x.mbPerSec));

  // Latency at a fixed rate, on the round-0 topics (on first: it is the one that rolls and copies).
  const latency: Record<string, BenchSummary['latencyMs'] & { mbPerSec: number; disk?: DiskMax }> = {};
  for (const tiering of ['on', 'off'] as const) {
    const topic = `tiered-bench-${tiering}-0`;
    await settleDirtyPages(node.dir);
    const run = bench(node, 'produce', topic, ['--throughput', String(recordsPerSec), '--linger-ms', '1', '--seconds', String(latencySeconds),
      '--num-records', String(recordsPerSec * latencySeconds * 2), '--acks', '1', '--warmup-seconds', '2']);
    const sampled = tiering === 'on' ? await whileSampling(join(node.dir, `${topic}-0`), run) : { result: await run, disk: undefined };
    noteDisk(sampled.disk);
    const l = sampled.result.latencyMs!;
    latency[tiering] = { p50: l.p50, p99: l.p99, 'p99.9': l['p99.9'], max: l.max, mbPerSec: sampled.result.mbPerSec, ...(sampled.disk !== undefined ? { disk: sampled.disk } : {}) };
    log(`latency ${tiering}: ${JSON.stringify(latency[tiering])}`);
  }

  // (b) the first readRecords of the round-0 topics: from the tier vs from local disk.
  const tiered = await waitTiered(node, 'tiered-bench-on-0', readRecords);
  log(`tiered: ${JSON.stringify(tiered)}`);
  await settleDirtyPages(node.dir);
  const local = await bench(node, 'consume', 'tiered-bench-off-0', ['--num-records', String(readRecords)]);
  const remote = await readSampled(node, 'tiered-bench-on-0', readRecords);
  // A second read of the tier: the chunks the first left in the cache are at most its bound.
  log(`read local ${local.mbPerSec} MB/s, tier ${remote.read.mbPerSec} MB/s`);

  const p99DeltaMs = round(latency['on']!.p99 - latency['off']!.p99, 3);
  const targets = {
    produceThroughputRatio: { value: round(onMb / offMb, 3), target: '>= 0.9', pass: onMb / offMb >= 0.9 },
    produceP99DeltaMs: { value: p99DeltaMs, target: '<= 1', pass: p99DeltaMs <= 1 },
    tierReadRatio: { value: round(remote.read.mbPerSec / local.mbPerSec, 3), target: '>= 0.5', pass: remote.read.mbPerSec / local.mbPerSec >= 0.5 },
    // At the fixed rate (the issue's "5 minutes at 50 MB/s"; the max-rate runs' figures are in
    // produce.runs): the live log, what local retention governs; .deleted files waiting out
    // file.delete.delay.ms are reported beside it.
    localDiskBytes: {
      value: diskMax.live, target: `<= ${diskBoundBytes} (local.retention.bytes + 2 segments)`, pass: diskMax.live <= diskBoundBytes,
      withDeletedFilesBytes: diskMax.all,
    },
    chunkCacheBytes: { value: remote.cacheMaxBytes, target: `<= ${remote.cacheBoundBytes}`, pass: remote.cacheBoundBytes !== null && remote.cacheMaxBytes <= remote.cacheBoundBytes },
  };
  Object.assign(result, {
    produce: { runs, medianMbPerSec: { off: offMb, on: onMb } },
    latency: { recordsPerSec, ...latency },
    read: {
      records: readRecords, tierState: tiered,
      localMbPerSec: local.mbPerSec, tierMbPerSec: remote.read.mbPerSec, localSeconds: local.seconds, tierSeconds: remote.read.seconds,
    },
    targets,
  });
} finally {
  await cluster.close();
}

if (s3) {
  // The same tier read against S3 (s3rver on loopback, its own process), on a broker of its own.
  const server = await startS3Server();
  const s3Cluster = await ServerProcesses.start(1, brokerSettings({
    'remote.log.storage.manager.class.name': 'io.aiven.kafka.tieredstorage.RemoteStorageManager',
    'rsm.config.storage.backend.class': 'io.aiven.kafka.tieredstorage.storage.s3.S3Storage',
    'rsm.config.storage.s3.bucket.name': BUCKET, 'rsm.config.storage.s3.endpoint.url': `http://127.0.0.1:${server.port}`,
    'rsm.config.storage.s3.path.style.access.enabled': 'true', 'rsm.config.storage.aws.access.key.id': ACCESS_KEY,
    'rsm.config.storage.aws.secret.access.key': SECRET,
  }));
  try {
    const node = s3Cluster.nodes[0]!;
    const records = Math.floor(s3ReadBytes / RECORD_BYTES);
    await createTopic(node, 'tiered-bench-s3', true);
    await bench(node, 'produce', 'tiered-bench-s3', ['--num-records', String(records + Math.ceil((3 * segmentBytes) / RECORD_BYTES)), '--acks', '1']);
    const t0 = performance.now();
    await waitTiered(node, 'tiered-bench-s3', records);
    const copySeconds = round((performance.now() - t0) / 1000);
    const remote = await readSampled(node, 'tiered-bench-s3', records);
    log(`s3 read ${remote.read.mbPerSec} MB/s`);
    const localRead = (result['read'] as { localMbPerSec: number } | undefined)?.localMbPerSec;
    result['s3'] = {
      readBytes: s3ReadBytes, tierMbPerSec: remote.read.mbPerSec, tierSeconds: remote.read.seconds, waitForCopySeconds: copySeconds,
      ratioToLocalRead: localRead ? round(remote.read.mbPerSec / localRead, 3) : null, chunkCacheMaxBytes: remote.cacheMaxBytes, chunkCacheBoundBytes: remote.cacheBoundBytes,
    };
  } finally {
    await s3Cluster.close();
    await stopS3Server(server);
  }
}

result['loadavgStart'] = loadavgStart;
result['loadavgEnd'] = loadavg();
console.log(JSON.stringify(result, null, 2));

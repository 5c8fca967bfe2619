// bench/storage: the partition log against this machine's own disk, in one run.
//   npm run bench:storage                 (prints one JSON object on stdout, progress on stderr)
//   LOGLINE_BENCH_DIR=/path  LOGLINE_BENCH_SCALE=0.25 npm run bench:storage   (smaller, elsewhere)
//
// First the raw sequential write bandwidth (2 GiB of 1 MiB blocks, without and with an fsync at
// the end), then the log: 1 MiB appends of 1 KiB-record batches to one partition and to 100,
// reads of warm (page cache) and cold (caches dropped, needs root) segments, recovery of a 4 GiB
// log after a clean and after an unclean shutdown, and opening 10,000 partitions in a fresh process
// (time and RSS). Ratios compare each figure with the raw bandwidth measured in the same run.
import { closeSync, fsyncSync, mkdirSync, openSync, rmSync, writeFileSync, writeSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { BatchHeaderAt, buildRecordBatchSync, crc32c, crc32cImplementation, crc32cIsNative, LOG_OVERHEAD_BYTES, RECORD_BATCH_HEADER_BYTES } from '../src/records/index.js';
import { LogManager, NodeFileSystem, logConfig, type PartitionLog } from '../src/storage/index.js';
import { systemClock } from '../src/util/index.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const MB = 1e6;
const scale = Number(process.env.LOGLINE_BENCH_SCALE ?? '1');
const root = process.env.LOGLINE_BENCH_DIR ?? join(tmpdir(), `logline-bench-storage-${process.pid}`);
const say = (m: string): void => { process.stderr.write(`bench:storage ${m}\n`); };
const round = (n: number, digits = 1): number => Number(n.toFixed(digits));

function seconds<T>(fn: () => T): [T, number] {
  const t0 = performance.now();
  const v = fn();
  return [v, (performance.now() - t0) / 1000];
}

async function secondsAsync<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const v = await fn();
  return [v, (performance.now() - t0) / 1000];
}

/** Drops the page cache so the next reads come from the device; false when not permitted. */
function dropCaches(): boolean {
  try {
    spawnSync('sync');
    writeFileSync('/proc/sys/vm/drop_caches', '3');
    return true;
  } catch {
    return false;
  }
}

/** CRC32C over 1 MiB buffers: every produced batch is checked, so this bounds the append rate. */
function crc32cMBps(): number {
  const buf = Buffer.alloc(MiB, 0x33);
  const [, s] = seconds(() => { for (let i = 0; i < 1024; i++) crc32c(buf); });
  return 1024 * MiB / s / MB;
}

function rawSequentialWrite(bytes: number, fsyncAtEnd: boolean): number {
  const path = join(root, 'raw.bin');
  const block = Buffer.alloc(MiB, 0x5a);
  const [, s] = seconds(() => {
    const fd = openSync(path, 'w');
    for (let written = 0; written < bytes; written += block.length) writeSync(fd, block);
    if (fsyncAtEnd) fsyncSync(fd);
    closeSync(fd);
  });
  unlinkSync(path);
  return bytes / s / MB;
}

/** One RecordBatch of about 1 MiB: 1024 records with an 8-byte key and a 1000-byte value. */
function oneMiBBatch(): Buffer {
  const value = Buffer.alloc(1000, 0x61);
  return buildRecordBatchSync({
    records: Array.from({ length: 1024 }, (_, i) => ({ key: Buffer.from(`key-${String(i).padStart(4, '0')}`), value, timestamp: Date.now() })),
  });
}

function manager(dir: string): LogManager {
  // Retention, flush and cleaner stay off the clock: the bench drives the log directly.
  return new LogManager({ dir, fs: new NodeFileSystem(), clock: systemClock, configFor: () => logConfig({}), cleanerEnable: false });
}

/** Appends `bytes` of 1 MiB batches round-robin over `partitions` logs; MB/s without and with the final flush. */
async function appendThroughput(dir: string, partitions: number, bytes: number): Promise<{ mbps: number; mbpsWithFlush: number; appends: number }> {
  const m = manager(dir);
  const logs: PartitionLog[] = Array.from({ length: partitions }, (_, p) => m.getOrCreateLog('bench', p, null));
  const batch = oneMiBBatch();
  const appends = Math.ceil(bytes / batch.length);
  // The log assigns offsets by rewriting the base offset in place; resetting it to 0 makes the
  // buffer again what a producer sends (the CRC does not cover it), without copying 1 MiB.
  const t0 = performance.now();
  for (let i = 0; i < appends; i++) {
    batch.writeBigInt64BE(0n, BatchHeaderAt.BaseOffset);
    await logs[i % partitions]!.appendAsLeader(batch, 0);
  }
  const appended = (performance.now() - t0) / 1000;
  for (const log of logs) log.flush();
  const flushed = (performance.now() - t0) / 1000;
  m.close();
  const total = appends * batch.length;
  return { mbps: total / appended / MB, mbpsWithFlush: total / flushed / MB, appends };
}

/** Reads a whole partition front to back in fetches of up to 1 MiB, as a consumer's fetch would. */
function readThroughput(dir: string): { mbps: number; bytes: number } {
  const m = manager(dir);
  const log = m.getOrCreateLog('bench', 0, null);
  let offset = log.logStartOffset;
  let bytes = 0;
  const [, s] = seconds(() => {
    while (offset < log.logEndOffset) {
      const data = log.read(offset, MiB, log.logEndOffset);
      if (data.length === 0) break;
      bytes += data.length;
      // The next fetch starts after the last batch returned: its base offset + last offset delta.
      let pos = 0;
      let last = offset;
      while (pos + RECORD_BATCH_HEADER_BYTES <= data.length) {
        const base = Number(data.readBigInt64BE(pos + BatchHeaderAt.BaseOffset));
        const len = data.readInt32BE(pos + BatchHeaderAt.BatchLength);
        last = base + data.readInt32BE(pos + BatchHeaderAt.LastOffsetDelta);
        pos += LOG_OVERHEAD_BYTES + len;
      }
      offset = last + 1;
    }
  });
  m.close();
  return { mbps: bytes / s / MB, bytes };
}

/** Reopens a log directory; with `unclean` the clean-shutdown marker and recovery points are removed first. */
function recoveryTime(dir: string, unclean: boolean): { seconds: number; segmentsScanned: number; batchesScanned: number; mbpsScanned: number } {
  if (unclean) {
    rmSync(join(dir, '.kafka_cleanshutdown'), { force: true });
    rmSync(join(dir, 'recovery-point-offset-checkpoint'), { force: true });
  }
  const [log, s] = seconds(() => manager(dir).getOrCreateLog('bench', 0, null));
  const scannedBytes = log.segments.reduce((n, seg) => n + seg.size, 0);
  const r = { seconds: round(s, 3), segmentsScanned: log.recovery.segmentsScanned, batchesScanned: log.recovery.batchesScanned, mbpsScanned: round(unclean ? scannedBytes / s / MB : 0) };
  log.close();
  return r;
}

/** Child mode: open every partition of a directory; prints seconds and RSS. */
function openAll(dir: string): void {
  const [m, s] = seconds(() => {
    const mgr = manager(dir);
    for (const { topic, partition } of mgr.partitionDirs()) mgr.getOrCreateLog(topic, partition, null);
    return mgr;
  });
  process.stdout.write(JSON.stringify({ partitions: m.logs.size, seconds: round(s, 3), rssMB: round(process.memoryUsage().rss / MB), openFiles: m.files.openCount }));
  m.close();
}

async function manyPartitions(dir: string, n: number): Promise<object> {
  const m = manager(dir);
  const small = buildRecordBatchSync({ records: [{ key: Buffer.from('k'), value: Buffer.alloc(100, 0x62) }] });
  for (let p = 0; p < n; p++) await m.getOrCreateLog('wide', p, null).appendAsLeader(small, 0);
  m.close();
  const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--open-all', dir], { encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`open-all child failed: ${child.stderr}`);
  return JSON.parse(child.stdout) as object;
}

async function main(): Promise<void> {
  mkdirSync(root, { recursive: true });
  const rawBytes = Math.round(2 * GiB * scale / MiB) * MiB;
  const recoveryBytes = Math.round(4 * GiB * scale / MiB) * MiB;
  try {
    say(`raw sequential write of ${rawBytes / GiB} GiB in ${root}`);
    const rawNoFsync = rawSequentialWrite(rawBytes, false);
    const rawFsync = rawSequentialWrite(rawBytes, true);
    const crc = crc32cMBps();

    say('append: one partition');
    const one = await appendThroughput(join(root, 'one'), 1, rawBytes);
    say('append: 100 partitions');
    const hundred = await appendThroughput(join(root, 'hundred'), 100, rawBytes);
    rmSync(join(root, 'hundred'), { recursive: true, force: true });

    say('read: warm then cold');
    readThroughput(join(root, 'one')); // make sure it is all in the page cache
    const warm = readThroughput(join(root, 'one'));
    const cold = dropCaches() ? readThroughput(join(root, 'one')) : null;
    rmSync(join(root, 'one'), { recursive: true, force: true });

    say(`recovery of a ${recoveryBytes / GiB} GiB log`);
    await appendThroughput(join(root, 'big'), 1, recoveryBytes);
    const clean = recoveryTime(join(root, 'big'), false);
    const unclean = recoveryTime(join(root, 'big'), true);
    const uncleanCold = dropCaches() ? recoveryTime(join(root, 'big'), true) : null;
    rmSync(join(root, 'big'), { recursive: true, force: true });

    say('10,000 partitions');
    const open = await manyPartitions(join(root, 'wide'), 10_000);

    const out = {
      bench: 'storage', dir: root, scale,
      machine: { rawWriteMBps: round(rawNoFsync), rawWriteFsyncAtEndMBps: round(rawFsync), rawBytes, crc32cMBps: round(crc), crc32cNative: crc32cIsNative, crc32cImplementation,
        // Validating the CRC and then writing are sequential: this is the most an append can reach.
        appendCeilingMBps: round(1 / (1 / crc + 1 / rawNoFsync)) },
      append: {
        onePartition: { MBps: round(one.mbps), MBpsWithFinalFlush: round(one.mbpsWithFlush), ratioToRaw: round(one.mbps / rawNoFsync, 2), ratioWithFlushToRawFsync: round(one.mbpsWithFlush / rawFsync, 2) },
        hundredPartitions: { MBps: round(hundred.mbps), MBpsWithFinalFlush: round(hundred.mbpsWithFlush), ratioToRaw: round(hundred.mbps / rawNoFsync, 2), ratioWithFlushToRawFsync: round(hundred.mbpsWithFlush / rawFsync, 2) },
        targetRatio: 0.8,
      },
      read: { warmMBps: round(warm.mbps), coldMBps: cold ? round(cold.mbps) : 'unavailable (dropping caches needs root)', bytes: warm.bytes, warmTargetMBps: 1000 },
      recovery: { logBytes: recoveryBytes, clean, unclean, uncleanColdCache: uncleanCold, uncleanTargetMBps: 500 },
      tenThousandPartitions: { ...open, targetSeconds: 5, targetRssMB: 500 },
    };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  } finally {
    if (!process.env.LOGLINE_BENCH_DIR) rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--open-all') openAll(process.argv[3]!);
else await main();

// bench/limits: the machine's own ceilings, measured in the same run as the other benchmarks.
//   node dist/bench/limits.js [--dir DATA_DIR] [--seconds N]
// Loopback TCP bandwidth between two processes (a child sinks bytes; the parent writes 1 MiB
// chunks), and sequential file write bandwidth to DATA_DIR's disk: into the page cache, and
// with an fsync at the end. Prints one JSON object.
import { spawn } from 'node:child_process';
import { createConnection } from 'node:net';
import { mkdtempSync, openSync, writeSync, fsync, fsyncSync, closeSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Histogram } from '../src/util/index.js';

const MiB = 1024 * 1024;

function sinkServerSource(): string {
  return `const net=require('node:net');let n=0;const s=net.createServer(c=>{c.on('data',d=>{n+=d.length});c.on('end',()=>{c.end(String(n))})});s.listen(0,'127.0.0.1',()=>{process.stdout.write(String(s.address().port)+'\\n')});process.on('disconnect',()=>process.exit(0));`;
}

export async function loopbackTcpGBps(seconds: number): Promise<number> {
  const child = spawn(process.execPath, ['-e', sinkServerSource()], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout!.once('data', (d) => resolve(Number(String(d).trim())));
      child.once('error', reject);
    });
    const chunk = Buffer.alloc(MiB, 0x61);
    const sock = createConnection({ host: '127.0.0.1', port });
    await new Promise<void>((r) => sock.once('connect', () => r()));
    const start = performance.now();
    let sent = 0;
    while (performance.now() - start < seconds * 1000) {
      if (!sock.write(chunk)) await new Promise<void>((r) => sock.once('drain', () => r()));
      sent += chunk.length;
    }
    const received = await new Promise<number>((resolve) => {
      let text = '';
      sock.on('data', (d) => { text += d; });
      sock.on('end', () => resolve(Number(text)));
      sock.end();
    });
    const elapsed = (performance.now() - start) / 1000;
    if (received !== sent) throw new Error(`sink received ${received} of ${sent} bytes`);
    return sent / elapsed / 1e9;
  } finally {
    child.kill('SIGKILL');
  }
}

export function sequentialWriteMBps(dir: string, bytes: number, fsync: boolean): number {
  const path = join(dir, `limits-${process.pid}-${fsync ? 'sync' : 'cache'}.bin`);
  const block = Buffer.alloc(MiB, 0x62);
  const fd = openSync(path, 'w');
  try {
    const start = performance.now();
    for (let written = 0; written < bytes; written += block.length) writeSync(fd, block);
    if (fsync) fsyncSync(fd);
    return bytes / ((performance.now() - start) / 1000) / 1e6;
  } finally {
    closeSync(fd);
    rmSync(path, { force: true });
  }
}

/**
 * The floor under every commit: fsync of a small append, alone and with three files appended and
 * fsynced at once (what three voters on one disk do), each for `probeMs`. Async fsync, as the Raft
 * driver uses. The tail is what matters here: on a shared virtual disk most fsyncs take a fraction
 * of a millisecond, but stalls of 10-50 ms hit every file at once; `stalledShare` is the fraction
 * of the probe's time spent inside fsyncs over 5 ms (per file).
 */
export async function fsyncFloor(dir: string, probeMs: number): Promise<Record<string, number>> {
  const probe = async (files: number): Promise<{ h: Histogram; stalledMs: number }> => {
    const h = new Histogram();
    let stalledMs = 0;
    const deadline = performance.now() + probeMs;
    await Promise.all(Array.from({ length: files }, async (_, i) => {
      const path = join(dir, `fsync-probe-${process.pid}-${files}-${i}`);
      const fd = openSync(path, 'a');
      const block = Buffer.alloc(200, 1);
      try {
        while (performance.now() < deadline) {
          writeSync(fd, block);
          const t0 = performance.now();
          await new Promise<void>((resolve, reject) => fsync(fd, (err) => (err === null ? resolve() : reject(err))));
          const took = performance.now() - t0;
          h.record(took * 1000);
          if (took > 5) stalledMs += took / files;
        }
      } finally {
        closeSync(fd);
        rmSync(path, { force: true });
      }
    }));
    return { h, stalledMs };
  };
  const one = await probe(1);
  const three = await probe(3);
  const ms = (us: number): number => Math.round(us / 10) / 100;
  const figures = (prefix: string, p: { h: Histogram; stalledMs: number }): Record<string, number> => ({
    [`${prefix}P50Ms`]: ms(p.h.percentile(50)), [`${prefix}P99Ms`]: ms(p.h.percentile(99)), [`${prefix}P999Ms`]: ms(p.h.percentile(99.9)),
    [`${prefix}MaxMs`]: ms(p.h.max), [`${prefix}StalledShare`]: Math.round((p.stalledMs / probeMs) * 1000) / 1000,
  });
  return { ...figures('oneFile', one), ...figures('threeFiles', three) };
}

export async function benchLimits(dir: string, seconds: number, writeBytes: number): Promise<Record<string, unknown>> {
  return {
    loopbackTcpGBps: Math.round((await loopbackTcpGBps(seconds)) * 1000) / 1000,
    sequentialWrite: {
      dir, bytes: writeBytes,
      pageCacheMBps: Math.round(sequentialWriteMBps(dir, writeBytes, false)),
      withFsyncMBps: Math.round(sequentialWriteMBps(dir, writeBytes, true)),
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const arg = (name: string) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; };
  const own = arg('--dir') === undefined;
  const dir = arg('--dir') ?? mkdtempSync(join(tmpdir(), 'logline-limits-'));
  try {
    const result = await benchLimits(dir, Number(arg('--seconds') ?? 3), Number(arg('--write-mib') ?? 2048) * MiB);
    console.log(JSON.stringify({ bench: 'limits', node: process.version, ...result }, null, 2));
  } finally {
    if (own) rmSync(dir, { recursive: true, force: true });
  }
}

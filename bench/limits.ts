// bench/limits: the machine's own ceilings, measured in the same run as the other benchmarks.
//   node dist/bench/limits.js [--dir DATA_DIR] [--seconds N]
// Loopback TCP bandwidth between two processes (a child sinks bytes; the parent writes 1 MiB
// chunks), and sequential file write bandwidth to DATA_DIR's disk: into the page cache, and
// with an fsync at the end. Prints one JSON object.
import { spawn } from 'node:child_process';
import { createConnection } from 'node:net';
import { mkdtempSync, openSync, writeSync, fsyncSync, closeSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';

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

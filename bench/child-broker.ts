// `logline server` as a child process for benchmarks: a fresh data directory, a free loopback
// port, its own event loop (so the load generator is not what is measured), stopped cleanly.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface ChildBroker { port: number; pid: number; close(): Promise<void> }

/**
 * Starts the broker on `dataDir` with `--set` overrides; LOGLINE_BENCH_CHILD_NODE_ARGS adds node
 * flags (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
 */
export async function childBroker(dataDir: string, overrides: Record<string, string> = {}): Promise<ChildBroker> {
  const bin = fileURLToPath(new URL('../../bin/logline.js', import.meta.url));
  const nodeArgs = (process.env.LOGLINE_BENCH_CHILD_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  const sets = Object.entries(overrides).flatMap(([k, v]) => ['--set', `${k}=${v}`]);
  const child = spawn(process.execPath, [...nodeArgs, bin, 'server', '--data-dir', dataDir, '--listeners', 'PLAINTEXT://127.0.0.1:0', '--set', 'http.listener=127.0.0.1:0', '--set', 'schema.registry.listener=127.0.0.1:0', ...sets],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error('child broker did not report its port within 30 s')), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      text += d.toString();
      const m = /listening on PLAINTEXT:\/\/127\.0\.0\.1:(\d+)/.exec(text);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); text = ''; }
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`child broker exited with ${code}`)); });
  });
  return { port, pid: child.pid!, close: () => stopChild(child, exited) };
}

/** SIGTERM (clean shutdown), then SIGKILL if the broker has not exited within 10 s. */
async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  process.kill(child.pid!, 'SIGTERM');
  const timer = setTimeout(() => { if (child.exitCode === null) process.kill(child.pid!, 'SIGKILL'); }, 10_000);
  await exited;
  clearTimeout(timer);
}

/** CPU seconds (user + system) a process has used so far, from /proc; null where there is none. */
export function processCpuSeconds(pid: number): number | null {
  if (pid === process.pid) { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; }
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return null;
  }
}

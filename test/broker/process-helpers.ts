// Runs a client program to completion (killed after `timeoutMs`), collecting its output; `env` is
// added to this process's environment.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

export function runProcess(cmd: string, args: string[], input: string | null = null, timeoutMs = 30_000, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: [input === null ? 'ignore' : 'pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => { stdout += d; });
    child.stderr!.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
    if (input !== null) child.stdin!.end(input);
  });
}

/** A fresh data directory for a broker under test, removed when the test process exits. */
export function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'logline-test-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Resolves with `promise`, or rejects after `timeoutMs` naming what was awaited. */
export async function within<T>(timeoutMs: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: no answer in ${timeoutMs} ms`)), timeoutMs); });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** `logline server` as a child process on a free loopback port; resolves once it listens. */
export function startServerProcess(dataDir: string, extraArgs: string[] = []): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['bin/logline.js', 'server', '--data-dir', dataDir, '--listeners', 'PLAINTEXT://127.0.0.1:0', ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`server did not start: ${out}`)); }, 20_000);
    const onData = (d: Buffer) => {
      out += d;
      const m = /listening on PLAINTEXT:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) { clearTimeout(timer); resolve({ child, port: Number(m[1]) }); }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => { clearTimeout(timer); if (!/listening/.test(out)) reject(new Error(`server exited ${code}: ${out}`)); });
  });
}

/** SIGKILLs a child process this test started (by its handle) and waits for it to be gone. */
export function killProcess(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) { resolve(); return; }
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

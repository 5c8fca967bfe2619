// Free TCP ports for clusters that tests and the bench start on 127.0.0.1, reserved across
// processes. Two test files run at once, and a node that is killed and restarted binds its port
// again: a port that is merely free when picked can be taken by another process's pick before it
// is bound, or while its node is down. A pick is therefore reserved by a lock file named after the
// port (in the OS temp directory) holding the picking process's PID; other processes skip it until
// that process has exited, when the lock is stale and may be taken over.
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Picks come from below the kernel's ephemeral range (32768-60999 on Linux), which outgoing connections and port 0 use. */
const FREE_PORT_LOW = 20_000;
const FREE_PORT_HIGH = 32_768;
const LOCK_DIR = join(tmpdir(), 'logline-port-locks');

/** Ports this process holds: its own picks are never handed out twice. */
const held = new Set<number>();

/**
 * A free TCP port on `host`, reserved for this process's lifetime: bindable now, and handed out by
 * no other freePort call in this or any other process while this one lives.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = FREE_PORT_LOW + Math.floor(Math.random() * (FREE_PORT_HIGH - FREE_PORT_LOW));
    if (await reservePort(port, host)) return port;
  }
  throw new Error(`no free port found in ${FREE_PORT_LOW}-${FREE_PORT_HIGH - 1} on ${host} after 200 picks`);
}

/** `n` distinct ports from freePort. */
export async function freePorts(n: number, host = '127.0.0.1'): Promise<number[]> {
  const out: number[] = [];
  while (out.length < n) out.push(await freePort(host));
  return out;
}

/**
 * Reserves `port` for this process if no living process holds it and it is bindable on `host`.
 * For callers that need particular ports (a run of consecutive ones); freePort picks for itself.
 */
export async function reservePort(port: number, host = '127.0.0.1'): Promise<boolean> {
  if (held.has(port) || !takeLock(port)) return false;
  if (await bindable(host, port)) {
    if (held.size === 0) process.once('exit', () => { for (const p of held) releaseLock(p); });
    held.add(port);
    return true;
  }
  releaseLock(port);
  return false;
}

function takeLock(port: number): boolean {
  mkdirSync(LOCK_DIR, { recursive: true });
  const file = join(LOCK_DIR, String(port));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      try { writeSync(fd, String(process.pid)); } finally { closeSync(fd); }
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    if (!staleLock(file)) return false;
    try { unlinkSync(file); } catch { /* another process took it over first */ }
  }
  return false;
}

/** A lock whose process is gone (or that is unreadable or empty, as one being written may be) is stale only when its PID is known dead. */
function staleLock(file: string): boolean {
  let pid: number;
  try { pid = Number(readFileSync(file, 'utf8')); } catch { return false; }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return !held.has(Number(file.slice(LOCK_DIR.length + 1)));
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function releaseLock(port: number): void {
  try { unlinkSync(join(LOCK_DIR, String(port))); } catch { /* already gone */ }
}

function bindable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
}

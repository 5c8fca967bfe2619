// Child processes for tests: client programs run to completion, `logline server` as a single node
// or as the combined broker+controller nodes of a cluster, and their temporary data directories.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { freePort } from '../../src/util/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { NodeFileSystem, randomUuid, writeMetaProperties } from '../../src/storage/index.js';

/** Runs a client program to completion (killed after `timeoutMs`), collecting its output; `env` is added to this process's environment. */
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

/** Polls `probe` every `intervalMs` until it gives a value (a throw counts as not yet); rejects after `timeoutMs`. */
export async function until<T>(timeoutMs: number, what: string, probe: () => Promise<T | undefined>, intervalMs = 50): Promise<T> {
  let stopped = false;
  try {
    return await within(timeoutMs, what, (async () => {
      while (!stopped) {
        const v = await probe().catch(() => undefined);
        if (v !== undefined) return v;
        await new Promise((r) => setTimeout(r, intervalMs));
      }
      throw new Error(`${what}: stopped`);
    })());
  } finally {
    stopped = true;
  }
}

/**
 * `logline server` as a child process on a free loopback port; resolves once it listens, with its
 * output so far and from then on (`output()`).
 */
export function startServerProcess(dataDir: string, extraArgs: string[] = []): Promise<{ child: ChildProcess; port: number; output: () => string }> {
  const child = spawn(process.execPath, ['bin/logline.js', 'server', '--data-dir', dataDir, '--listeners', 'PLAINTEXT://127.0.0.1:0', '--set', 'http.listener=127.0.0.1:0', '--set', 'schema.registry.listener=127.0.0.1:0', ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let started = false;
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`server did not start: ${out}`)); }, 20_000);
    const onData = (d: Buffer) => {
      out += d;
      const m = started ? null : /listening on PLAINTEXT:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) { started = true; clearTimeout(timer); resolve({ child, port: Number(m[1]), output: () => out }); }
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

/** One combined broker+controller `logline server` process of a cluster under test. */
export interface ClusterNodeProcess {
  id: number;
  roles: readonly ('broker' | 'controller')[];
  /** 0 for a controller-only node. */
  brokerPort: number;
  /** 0 for a broker-only node. */
  controllerPort: number;
  dir: string; child: ChildProcess | null; log: string;
  /** The address its listeners bind and advertise; 127.0.0.1 unless set. */
  host?: string;
  /** A network namespace to run it in (`ip netns exec`), for tests that cut links between nodes. */
  netns?: string;
  /** The port its broker listener advertises when not its own (a fault proxy in front of it); clients and followers then go there. */
  advertisedPort?: number;
}

/**
 * `count` combined broker+controller nodes (ids 1..count), or with `split` that many controller-only
 * nodes (ids 1..count) and `split.brokers` broker-only ones after them, on free loopback ports, each
 * with a data directory formatted with `clusterId` (what `logline storage format` writes: every node
 * of a cluster shares the cluster id), or left unformatted with null; `voters` is their
 * controller.quorum.voters. Nothing is started yet.
 */
export async function clusterNodeProcesses(count: number, clusterId: string | null, split?: { brokers: number }): Promise<{ nodes: ClusterNodeProcess[]; voters: string }> {
  const nodes: ClusterNodeProcess[] = [];
  const total = count + (split?.brokers ?? 0);
  for (let id = 1; id <= total; id++) {
    const dir = tempDataDir();
    if (clusterId !== null) writeMetaProperties(new NodeFileSystem(), dir, { nodeId: id, clusterId, directoryId: randomUuid() });
    const roles: ('broker' | 'controller')[] = split === undefined ? ['broker', 'controller'] : id <= count ? ['controller'] : ['broker'];
    nodes.push({
      id, roles, dir, child: null, log: '',
      brokerPort: roles.includes('broker') ? await freePort() : 0, controllerPort: roles.includes('controller') ? await freePort() : 0,
    });
  }
  return { nodes, voters: nodes.filter((n) => n.controllerPort !== 0).map((n) => `${n.id}@127.0.0.1:${n.controllerPort}`).join(',') };
}

/**
 * The configuration flags of node `n` (`logline server` and `logline storage` take the same): its
 * process.roles, listeners, the quorum, short Raft timeouts, plus `extraSets` (each key=value).
 */
export function clusterNodeArgs(n: ClusterNodeProcess, voters: string, extraSets: string[] = []): string[] {
  const broker = n.roles.includes('broker');
  const host = n.host ?? '127.0.0.1';
  const listeners = [...(broker ? [`PLAINTEXT://${host}:${n.brokerPort}`] : []), ...(n.roles.includes('controller') ? [`CONTROLLER://${host}:${n.controllerPort}`] : [])];
  return [
    '--node-id', String(n.id), '--data-dir', n.dir, '--listeners', listeners.join(','),
    ...(broker ? ['--advertised-listeners', `PLAINTEXT://${host}:${n.advertisedPort ?? n.brokerPort}`] : []),
    '--set', `process.roles=${n.roles.join(',')}`, '--set', 'controller.listener.names=CONTROLLER',
    '--set', 'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT', '--set', `controller.quorum.voters=${voters}`,
    '--set', 'controller.quorum.election.timeout.ms=300', '--set', 'controller.quorum.fetch.timeout.ms=600',
    '--set', 'controller.quorum.election.backoff.max.ms=300', '--set', 'controller.quorum.request.timeout.ms=600',
    '--set', 'http.listener=127.0.0.1:0', '--set', 'schema.registry.listener=127.0.0.1:0',
    ...extraSets.flatMap((kv) => ['--set', kv]),
  ];
}

/**
 * Starts node `n` as `logline server` with clusterNodeArgs; resolves once its broker listener (a
 * controller-only node: its controller listener) is up. Its output is appended to `n.log`.
 */
export function startClusterNodeProcess(n: ClusterNodeProcess, voters: string, extraSets: string[] = []): Promise<void> {
  const broker = n.roles.includes('broker');
  const host = n.host ?? '127.0.0.1';
  const args = ['bin/logline.js', 'server', ...clusterNodeArgs(n, voters, extraSets)];
  const ready = broker ? `listening on PLAINTEXT://${host}:${n.brokerPort}` : `controller listening on CONTROLLER://${host}:${n.controllerPort}`;
  // `ip netns exec` execs the command in place, so the child's pid is the server's own.
  const child = n.netns === undefined
    ? spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn('ip', ['netns', 'exec', n.netns, process.execPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  n.child = child;
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`node ${n.id} did not start: ${out}`)); }, 45_000);
    const onData = (d: Buffer) => {
      out += d;
      n.log += d;
      if (out.includes(ready)) { clearTimeout(timer); resolve(); }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => { clearTimeout(timer); if (!out.includes(ready)) reject(new Error(`node ${n.id} exited ${code}: ${out}`)); });
  });
}

/** The active controller as the broker on `port` names it in Metadata (-1 while none is known or it does not answer). */
export async function controllerIdOn(port: number): Promise<number> {
  return activeControllerOn(`127.0.0.1:${port}`);
}

/**
 * The active controller (the metadata quorum's leader) as DescribeQuorum names it through a broker
 * of `bootstrap`; -1 when none is known or nobody answers. Not Metadata's controllerId: that names
 * a live broker clients can reach, which is not the quorum's leader when controllers run apart.
 */
export async function activeControllerOn(bootstrap: string, requestTimeoutMs?: number): Promise<number> {
  const client = new ClusterClient({ bootstrap, ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }) });
  try {
    const conn = await client.any();
    const r = await conn.send(ApiKey.DescribeQuorum, conn.version(ApiKey.DescribeQuorum, 2), { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] });
    return r.topics[0]?.partitions[0]?.leaderId ?? -1;
  } catch {
    return -1;
  } finally {
    client.close();
  }
}

/** A single-node cluster that can be SIGKILLed and started again on the same port and data. */
export class SingleNodeServer {
  child: ChildProcess | null = null;
  readonly dir = tempDataDir();
  output = '';
  constructor(readonly port: number) {}
  get bootstrap(): string { return `127.0.0.1:${this.port}`; }
  /** Its HTTP listener (http://host:port) as its latest start logged it. */
  get http(): string {
    const all = [...this.output.matchAll(/http listening on (http:\/\/[^\s]+)/g)];
    assert.ok(all.length > 0, 'the node logged its HTTP listener');
    return all.at(-1)![1]!;
  }
  async start(): Promise<void> {
    const child = spawn(process.execPath, ['bin/logline.js', 'server', '--data-dir', this.dir, '--listeners', `PLAINTEXT://127.0.0.1:${this.port}`,
      '--set', 'http.listener=127.0.0.1:0', '--set', 'schema.registry.listener=127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server on ${this.port} did not start: ${out}`)), 60_000);
      const onData = (d: Buffer) => { out += d; this.output += d; if (/listening on PLAINTEXT/.test(out)) { clearTimeout(timer); resolve(); } };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => { clearTimeout(timer); if (!/listening/.test(out)) reject(new Error(`server exited ${code}: ${out}`)); });
    });
  }
  async kill(): Promise<void> {
    if (this.child !== null) await killProcess(this.child);
    this.child = null;
  }
}

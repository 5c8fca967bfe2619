// `logline verify --cluster N`: N combined broker+controller `logline server` processes on loopback
// ports, each data directory formatted first with `logline storage format` (one cluster id), as
// docs/operations.md starts a cluster by hand; and the nemesis, which on a schedule kills a node
// (SIGKILL, then a restart) or pauses it (SIGSTOP, then SIGCONT), one fault at a time, recording
// each as an operation of the nemesis process. Only the processes started here are ever signalled,
// by their own handles, and `close()` kills and waits for every one of them.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUuid } from '../storage/index.js';
import { Prng, assert, freePort, limits } from '../util/index.js';
import { NEMESIS, type FaultKind, type HistoryRecorder } from './check/history.js';

/** The CLI's entry point, next to this file's compiled place (dist/src/verify → bin). */
export const LOGLINE_BIN = fileURLToPath(new URL('../../../bin/logline.js', import.meta.url));

export interface ClusterNode {
  id: number;
  brokerPort: number;
  controllerPort: number;
  dir: string;
  child: ChildProcess | null;
  paused: boolean;
  /** The last lines the process wrote (kept short), for a report when it does not start. */
  log: string;
}

export interface LocalClusterOptions {
  nodes: number;
  /** Where the nodes' directories go; a fresh temporary directory (removed by close) when absent. */
  dataDir?: string;
  /** Extra key=value settings for every node. */
  settings?: string[];
  startTimeoutMs?: number;
}

const LOG_CHARS_KEPT = 8192;

export class LocalCluster {
  readonly nodes: ClusterNode[] = [];
  private voters = '';
  private ownsDir = false;
  private root = '';

  private constructor(private readonly o: LocalClusterOptions) {}

  /** Formats and starts every node; resolves when each listens. On failure everything started is stopped. */
  static async start(o: LocalClusterOptions): Promise<LocalCluster> {
    assert(Number.isInteger(o.nodes) && o.nodes >= 1 && o.nodes <= limits.verifyClusterNodesMax, `--cluster: 1..${limits.verifyClusterNodesMax} nodes`);
    const c = new LocalCluster(o);
    try {
      await c.prepare();
      await Promise.all(c.nodes.map((n) => c.startNode(n)));
      return c;
    } catch (err) {
      await c.close();
      throw err;
    }
  }

  get bootstrap(): string { return this.nodes.map((n) => `127.0.0.1:${n.brokerPort}`).join(','); }

  private async prepare(): Promise<void> {
    this.ownsDir = this.o.dataDir === undefined;
    this.root = this.o.dataDir ?? mkdtempSync(join(tmpdir(), 'logline-verify-'));
    const clusterId = randomUuid();
    for (let id = 1; id <= this.o.nodes; id++) {
      const dir = join(this.root, `node-${id}`);
      mkdirSync(dir, { recursive: true });
      this.nodes.push({ id, brokerPort: await freePort(), controllerPort: await freePort(), dir, child: null, paused: false, log: '' });
    }
    this.voters = this.nodes.map((n) => `${n.id}@127.0.0.1:${n.controllerPort}`).join(',');
    await Promise.all(this.nodes.map(async (n) => {
      const r = await run(process.execPath, [LOGLINE_BIN, 'storage', 'format', '--cluster-id', clusterId, '--ignore-formatted', ...this.args(n)], this.o.startTimeoutMs ?? 60_000);
      if (r.code !== 0) throw new Error(`logline storage format of node ${n.id} failed: ${r.output.slice(-2000)}`);
    }));
  }

  /** The node's configuration, as `logline server` and `logline storage format` both take it. */
  private args(n: ClusterNode): string[] {
    return [
      '--node-id', String(n.id), '--data-dir', n.dir,
      '--listeners', `PLAINTEXT://127.0.0.1:${n.brokerPort},CONTROLLER://127.0.0.1:${n.controllerPort}`,
      '--advertised-listeners', `PLAINTEXT://127.0.0.1:${n.brokerPort}`,
      '--set', 'process.roles=broker,controller', '--set', 'controller.listener.names=CONTROLLER',
      '--set', 'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT', '--set', `controller.quorum.voters=${this.voters}`,
      // Short Raft and session timeouts, so a killed or paused node is noticed within the run.
      '--set', 'controller.quorum.election.timeout.ms=500', '--set', 'controller.quorum.fetch.timeout.ms=1000',
      '--set', 'controller.quorum.election.backoff.max.ms=500', '--set', 'controller.quorum.request.timeout.ms=1000',
      '--set', 'broker.session.timeout.ms=3000', '--set', 'broker.heartbeat.interval.ms=500',
      '--set', 'replica.lag.time.max.ms=3000', '--set', 'http.listener=127.0.0.1:0',
      '--set', 'group.initial.rebalance.delay.ms=0', '--set', 'schema.registry.listener=',
      ...(this.o.settings ?? []).flatMap((kv) => ['--set', kv]),
    ];
  }

  private startNode(n: ClusterNode): Promise<void> {
    const child = spawn(process.execPath, [LOGLINE_BIN, 'server', ...this.args(n)], { stdio: ['ignore', 'pipe', 'pipe'] });
    n.child = child;
    n.paused = false;
    const ready = `listening on PLAINTEXT://127.0.0.1:${n.brokerPort}`;
    return new Promise((resolve, reject) => {
      let seen = '';
      const timer = setTimeout(() => reject(new Error(`node ${n.id} did not start in time: ${n.log.slice(-2000)}`)), this.o.startTimeoutMs ?? 60_000);
      const onData = (d: Buffer) => {
        n.log = (n.log + d).slice(-LOG_CHARS_KEPT);
        if (seen.length < 1 << 20) seen += d;
        if (seen.includes(ready)) { clearTimeout(timer); seen = ''; resolve(); }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code, signal) => { clearTimeout(timer); reject(new Error(`node ${n.id} exited (${code ?? signal}) before it listened: ${n.log.slice(-2000)}`)); });
    });
  }

  node(id: number): ClusterNode {
    const n = this.nodes.find((x) => x.id === id);
    assert(n !== undefined, `no node ${id}`);
    return n;
  }

  async kill(id: number): Promise<void> {
    const n = this.node(id);
    await stopChild(n.child);
    n.child = null;
    n.paused = false;
  }

  async restart(id: number): Promise<void> {
    const n = this.node(id);
    if (n.child !== null && (n.child.exitCode !== null || n.child.signalCode !== null)) n.child = null;
    assert(n.child === null, `node ${id} is running`);
    await this.startNode(n);
  }

  pause(id: number): void {
    const n = this.node(id);
    if (n.child !== null && !n.paused) { n.child.kill('SIGSTOP'); n.paused = true; }
  }

  resume(id: number): void {
    const n = this.node(id);
    if (n.child !== null && n.paused) { n.child.kill('SIGCONT'); n.paused = false; }
  }

  /** Every node running and not paused again (the end of a run, before the final read). */
  async heal(): Promise<void> {
    for (const n of this.nodes) {
      if (n.paused) this.resume(n.id);
      // A restart that failed leaves an exited child behind: start it again.
      if (n.child !== null && (n.child.exitCode !== null || n.child.signalCode !== null)) n.child = null;
      if (n.child === null) await this.startNode(n);
    }
  }

  /** Kills (resumed first, so the kill is delivered at once) and waits for every process started here; removes a temporary data directory. */
  async close(): Promise<void> {
    await Promise.all(this.nodes.map(async (n) => {
      if (n.paused) n.child?.kill('SIGCONT');
      await stopChild(n.child);
      n.child = null;
    }));
    if (this.ownsDir && this.root !== '') rmSync(this.root, { recursive: true, force: true });
  }
}

/** SIGKILLs a child started here and waits for its exit. */
function stopChild(child: ChildProcess | null): Promise<void> {
  if (child === null || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

function run(cmd: string, args: string[], timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d) => { output = (output + d).slice(-LOG_CHARS_KEPT); });
    child.stderr!.on('data', (d) => { output = (output + d).slice(-LOG_CHARS_KEPT); });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, output }); });
  });
}

export interface NemesisOptions {
  /** What the nemesis may do: kill (then restart) and pause (then resume). */
  faults: readonly ('kill' | 'pause')[];
  /** Time between the end of one fault and the start of the next. */
  intervalMs: number;
  /** How long a node stays killed or paused. */
  durationMs: number;
  /** At most this many faults. */
  faultsMax: number;
  seed: number;
}

/**
 * Injects faults until `done()` (checked between steps) or the count is spent, then heals: every
 * node resumed and running. Each fault and its end are recorded (invoke, then info: the nemesis
 * does not know what the fault did to the cluster).
 */
export async function runNemesis(cluster: LocalCluster, o: NemesisOptions, h: HistoryRecorder, done: () => boolean): Promise<void> {
  assert(o.faultsMax >= 0 && o.faultsMax <= limits.verifyFaultsMax, `faults: at most ${limits.verifyFaultsMax}`);
  const prng = new Prng(o.seed);
  const record = async (f: FaultKind, node: number, act: () => Promise<void> | void) => {
    const inv = h.invoke(NEMESIS, f, { node });
    try {
      await act();
      h.complete(inv, 'info', { node });
    } catch (err) {
      h.complete(inv, 'info', { node, error: err instanceof Error ? err.message.slice(0, 500) : String(err) });
    }
  };
  const wait = async (ms: number) => { for (const end = Date.now() + ms; Date.now() < end && !done();) await new Promise((r) => setTimeout(r, Math.min(100, end - Date.now()))); };
  try {
    for (let i = 0; i < o.faultsMax && o.faults.length > 0; i++) {
      await wait(o.intervalMs);
      if (done()) break;
      const node = cluster.nodes[prng.int(cluster.nodes.length)]!.id;
      if (o.faults[prng.int(o.faults.length)] === 'kill') {
        await record('kill', node, () => cluster.kill(node));
        await wait(o.durationMs);
        await record('restart', node, () => cluster.restart(node));
      } else {
        await record('pause', node, () => cluster.pause(node));
        await wait(o.durationMs);
        await record('resume', node, () => cluster.resume(node));
      }
    }
  } finally {
    for (const n of cluster.nodes) {
      if (n.paused) await record('resume', n.id, () => cluster.resume(n.id));
      if (n.child === null || n.child.exitCode !== null || n.child.signalCode !== null) await record('restart', n.id, () => cluster.restart(n.id));
    }
  }
}

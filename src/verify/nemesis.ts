// `logline verify --cluster N`: N combined broker+controller `logline server` processes on loopback
// ports, each data directory formatted first with `logline storage format` (one cluster id), as
// docs/operations.md starts a cluster by hand; and the nemesis, which on a schedule kills a node
// (SIGKILL, then a restart), pauses it (SIGSTOP, then SIGCONT), isolates it from the other nodes
// (then rejoins it) or fills its disk below the free-space floor (then frees it), one fault at a
// time, recording each as an operation of the nemesis process. Only the processes started here are
// ever signalled, by their own handles, and `close()` kills and waits for every one of them.
//
// Isolation and full disks need root. For isolation every node runs in its own network namespace
// (`ip netns exec`) on a private bridge, the clients in the root namespace reach every node, and a
// cut is a pair of blackhole routes between two namespaces (clients keep reaching the isolated
// node, as Jepsen's partitions do). For full disks each node's data directory is a small tmpfs;
// filling writes a file that leaves less than log.dir.min.free.bytes free, freeing deletes it.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
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
  /** The address its listeners bind: 127.0.0.1, or its namespace's address. */
  host: string;
  /** Its network namespace, with `netns`. */
  netns: string | null;
  isolated: boolean;
  /** The file that fills its disk while the disk is full. */
  filler: string | null;
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
  /** Each node in its own network namespace, so that `isolate` can cut it off (root only). */
  netns?: boolean;
  /** Each node's data directory on a tmpfs of this many MiB, so that `fillDisk` can fill it (root only). */
  diskMiB?: number;
}

/** With full disks: the floor each node keeps, and what a filled disk leaves free (below it, above zero: the floor refuses, nothing hits ENOSPC). */
const DISK_FLOOR_BYTES = 16 * 1024 * 1024;
const DISK_FILLED_FREE_BYTES = 8 * 1024 * 1024;

const LOG_CHARS_KEPT = 8192;

export class LocalCluster {
  readonly nodes: ClusterNode[] = [];
  private voters = '';
  private ownsDir = false;
  private root = '';
  /** This run's namespace, bridge and veth names start with it; its addresses are in `10.234.<tag>.0/24`. */
  private readonly tag = 1 + (process.pid % 250);
  private readonly mounts: string[] = [];
  private bridgeUp = false;

  private constructor(private readonly o: LocalClusterOptions) {}

  /** Formats and starts every node; resolves when each listens. On failure everything started is stopped. */
  static async start(o: LocalClusterOptions): Promise<LocalCluster> {
    assert(Number.isInteger(o.nodes) && o.nodes >= 1 && o.nodes <= limits.verifyClusterNodesMax, `--cluster: 1..${limits.verifyClusterNodesMax} nodes`);
    if (o.netns || o.diskMiB !== undefined) assert(process.getuid?.() === 0, 'isolating nodes (network namespaces) and filling their disks (tmpfs mounts) need root');
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

  get bootstrap(): string { return this.nodes.map((n) => `${n.host}:${n.brokerPort}`).join(','); }

  private get net(): string { return `10.234.${this.tag}`; }
  private nsOf(id: number): string { return `lv${this.tag}n${id}`; }
  private get bridge(): string { return `lv${this.tag}br`; }

  private async prepare(): Promise<void> {
    this.ownsDir = this.o.dataDir === undefined;
    this.root = this.o.dataDir ?? mkdtempSync(join(tmpdir(), 'logline-verify-'));
    const clusterId = randomUuid();
    for (let id = 1; id <= this.o.nodes; id++) {
      const dir = join(this.root, `node-${id}`);
      mkdirSync(dir, { recursive: true });
      if (this.o.diskMiB !== undefined) {
        await ok('mount', ['-t', 'tmpfs', '-o', `size=${this.o.diskMiB}m`, 'tmpfs', dir]);
        this.mounts.push(dir);
      }
      const node = { dir, child: null, paused: false, log: '', isolated: false, filler: null };
      if (this.o.netns) this.nodes.push({ ...node, id, host: `${this.net}.${10 + id}`, netns: this.nsOf(id), brokerPort: 9092, controllerPort: 9093 });
      else this.nodes.push({ ...node, id, host: '127.0.0.1', netns: null, brokerPort: await freePort(), controllerPort: await freePort() });
    }
    if (this.o.netns) await this.namespacesUp();
    this.voters = this.nodes.map((n) => `${n.id}@${n.host}:${n.controllerPort}`).join(',');
    await Promise.all(this.nodes.map(async (n) => {
      const r = await run(process.execPath, [LOGLINE_BIN, 'storage', 'format', '--cluster-id', clusterId, '--ignore-formatted', ...this.args(n)], this.o.startTimeoutMs ?? 60_000);
      if (r.code !== 0) throw new Error(`logline storage format of node ${n.id} failed: ${r.output.slice(-2000)}`);
    }));
  }

  /** The node's configuration, as `logline server` and `logline storage format` both take it. */
  private args(n: ClusterNode): string[] {
    return [
      '--node-id', String(n.id), '--data-dir', n.dir,
      '--listeners', `PLAINTEXT://${n.host}:${n.brokerPort},CONTROLLER://${n.host}:${n.controllerPort}`,
      '--advertised-listeners', `PLAINTEXT://${n.host}:${n.brokerPort}`,
      '--set', 'process.roles=broker,controller', '--set', 'controller.listener.names=CONTROLLER',
      '--set', 'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT', '--set', `controller.quorum.voters=${this.voters}`,
      // Short Raft and session timeouts, so a killed or paused node is noticed within the run.
      '--set', 'controller.quorum.election.timeout.ms=500', '--set', 'controller.quorum.fetch.timeout.ms=1000',
      '--set', 'controller.quorum.election.backoff.max.ms=500', '--set', 'controller.quorum.request.timeout.ms=1000',
      '--set', 'broker.session.timeout.ms=3000', '--set', 'broker.heartbeat.interval.ms=500',
      '--set', 'replica.lag.time.max.ms=3000', '--set', 'http.listener=127.0.0.1:0',
      '--set', 'group.initial.rebalance.delay.ms=0', '--set', 'schema.registry.listener=',
      // KIP-848 members heartbeat often, so rebalances finish within a run.
      '--set', 'group.consumer.min.heartbeat.interval.ms=100', '--set', 'group.consumer.heartbeat.interval.ms=500',
      ...(this.o.diskMiB !== undefined ? [
        '--set', `log.dir.min.free.bytes=${DISK_FLOOR_BYTES}`, '--set', `log.dir.free.bytes.alert.threshold=${DISK_FLOOR_BYTES}`,
        '--set', `log.segment.bytes=${4 * 1024 * 1024}`, '--set', `log.index.size.max.bytes=${64 * 1024}`,
      ] : []),
      ...(this.o.settings ?? []).flatMap((kv) => ['--set', kv]),
    ];
  }

  private startNode(n: ClusterNode): Promise<void> {
    const args = [LOGLINE_BIN, 'server', ...this.args(n)];
    // `ip netns exec` execs the command in place: the child's pid is the server's own.
    const child = n.netns === null ? spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn('ip', ['netns', 'exec', n.netns, process.execPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    n.child = child;
    n.paused = false;
    const ready = `listening on PLAINTEXT://${n.host}:${n.brokerPort}`;
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

  /** Cuts node `id` off from every other node, both ways (blackhole routes); clients still reach it. */
  async isolate(id: number): Promise<void> {
    const n = this.node(id);
    assert(n.netns !== null, 'isolate needs the nodes in network namespaces (netns)');
    n.isolated = true;
    for (const other of this.nodes) {
      if (other.id === id) continue;
      await ok('ip', ['-n', n.netns, 'route', 'replace', 'blackhole', `${other.host}/32`]);
      await ok('ip', ['-n', other.netns!, 'route', 'replace', 'blackhole', `${n.host}/32`]);
    }
  }

  /** Removes node `id`'s cuts. */
  async rejoin(id: number): Promise<void> {
    const n = this.node(id);
    if (n.netns === null) return;
    for (const other of this.nodes) {
      if (other.id === id) continue;
      await run('ip', ['-n', n.netns, 'route', 'del', 'blackhole', `${other.host}/32`], 10_000);
      await run('ip', ['-n', other.netns!, 'route', 'del', 'blackhole', `${n.host}/32`], 10_000);
    }
    n.isolated = false;
  }

  /** Writes a file on node `id`'s tmpfs that leaves it below its free-space floor (but not at zero). */
  fillDisk(id: number): void {
    const n = this.node(id);
    assert(this.o.diskMiB !== undefined, 'fill-disk needs the nodes\' data directories on a tmpfs (diskMiB)');
    const filler = join(n.dir, 'logline-verify-filler');
    n.filler = filler;
    const chunk = Buffer.alloc(1024 * 1024);
    const fd = openSync(filler, 'a');
    try {
      // Bounded: at most the volume's size in chunks.
      for (let i = 0; i < this.o.diskMiB; i++) {
        const st = statfsSync(n.dir);
        const toFill = st.bavail * st.bsize - DISK_FILLED_FREE_BYTES;
        if (toFill <= 0) break;
        writeSync(fd, chunk, 0, Math.min(chunk.length, toFill));
      }
    } finally {
      closeSync(fd);
    }
  }

  freeDisk(id: number): void {
    const n = this.node(id);
    if (n.filler !== null) rmSync(n.filler, { force: true });
    n.filler = null;
  }

  /** Every node running, connected, with room on its disk and not paused again (the end of a run, before the final read). */
  async heal(): Promise<void> {
    for (const n of this.nodes) {
      if (n.isolated) await this.rejoin(n.id);
      if (n.filler !== null) this.freeDisk(n.id);
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
    if (this.bridgeUp || this.o.netns) await this.namespacesDown();
    for (const dir of this.mounts.splice(0)) {
      if ((await run('umount', [dir], 30_000)).code !== 0) await run('umount', ['-l', dir], 30_000);
    }
    if (this.ownsDir && this.root !== '') rmSync(this.root, { recursive: true, force: true });
  }

  /** A bridge with the root namespace at .1 and one namespace per node at .(10 + id); leftovers of a killed run with the same names go first. */
  private async namespacesUp(): Promise<void> {
    await this.namespacesDown();
    this.bridgeUp = true;
    await ok('ip', ['link', 'add', this.bridge, 'type', 'bridge']);
    await ok('ip', ['addr', 'add', `${this.net}.1/24`, 'dev', this.bridge]);
    await ok('ip', ['link', 'set', this.bridge, 'up']);
    for (const n of this.nodes) {
      const ns = n.netns!;
      const veth = `lv${this.tag}v${n.id}`;
      await ok('ip', ['netns', 'add', ns]);
      await ok('ip', ['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
      await ok('ip', ['link', 'set', veth, 'master', this.bridge, 'up']);
      await ok('ip', ['-n', ns, 'addr', 'add', `${n.host}/24`, 'dev', 'eth0']);
      await ok('ip', ['-n', ns, 'link', 'set', 'eth0', 'up']);
      await ok('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
    }
  }

  /** Removes this cluster's namespaces, veths and bridge, whatever of them exists. */
  private async namespacesDown(): Promise<void> {
    // The veths first: a namespace's devices go asynchronously after `netns del`.
    for (const n of this.nodes) await run('ip', ['link', 'del', `lv${this.tag}v${n.id}`], 10_000);
    for (const n of this.nodes) await run('ip', ['netns', 'del', this.nsOf(n.id)], 10_000);
    await run('ip', ['link', 'del', this.bridge], 10_000);
    this.bridgeUp = false;
  }
}

/** Runs a command, throwing with its output when it fails. */
async function ok(cmd: string, args: string[]): Promise<void> {
  const r = await run(cmd, args, 30_000);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.output.trim()}`);
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

/** The faults the nemesis injects; each is undone after `durationMs`. */
export type NemesisFault = 'kill' | 'pause' | 'isolate' | 'disk-full';
export const NEMESIS_FAULTS: readonly NemesisFault[] = ['kill', 'pause', 'isolate', 'disk-full'];

export interface NemesisOptions {
  /** What the nemesis may do: kill (then restart), pause (then resume), isolate (then rejoin: needs `netns`), disk-full (then free: needs `diskMiB`). */
  faults: readonly NemesisFault[];
  /** Time between the end of one fault and the start of the next. */
  intervalMs: number;
  /** How long a node stays killed, paused, isolated or full. */
  durationMs: number;
  /** At most this many faults. */
  faultsMax: number;
  seed: number;
  /** `random` (default): each fault and node drawn from the seed; `cycle`: the faults in turn, the nodes round robin (a soak's thirds then see the same mix). */
  order?: 'random' | 'cycle';
}

/** What the cluster must be started with for these faults (network namespaces, tmpfs disks). */
export function clusterNeeds(o: NemesisOptions | undefined): Pick<LocalClusterOptions, 'netns' | 'diskMiB'> {
  return { ...(o?.faults.includes('isolate') ? { netns: true } : {}), ...(o?.faults.includes('disk-full') ? { diskMiB: 160 } : {}) };
}

/**
 * Injects faults until `done()` (checked between steps) or the count is spent, then heals: every
 * node resumed, running, connected and with room on its disk. Each fault and its end are recorded
 * (invoke, then info: the nemesis does not know what the fault did to the cluster).
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
      // A node's start failure ends with its output, whose last lines say why: keep the head and the tail.
      const message = err instanceof Error ? err.message : String(err);
      h.complete(inv, 'info', { node, error: message.length <= 1500 ? message : `${message.slice(0, 300)} … ${message.slice(-1200)}` });
    }
  };
  const steps: Record<NemesisFault, [FaultKind, (id: number) => Promise<void> | void, FaultKind, (id: number) => Promise<void> | void]> = {
    kill: ['kill', (id) => cluster.kill(id), 'restart', (id) => cluster.restart(id)],
    pause: ['pause', (id) => cluster.pause(id), 'resume', (id) => cluster.resume(id)],
    isolate: ['isolate', (id) => cluster.isolate(id), 'rejoin', (id) => cluster.rejoin(id)],
    'disk-full': ['fill-disk', (id) => cluster.fillDisk(id), 'free-disk', (id) => cluster.freeDisk(id)],
  };
  const wait = async (ms: number) => { for (const end = Date.now() + ms; Date.now() < end && !done();) await new Promise((r) => setTimeout(r, Math.min(100, end - Date.now()))); };
  try {
    for (let i = 0; i < o.faultsMax && o.faults.length > 0; i++) {
      await wait(o.intervalMs);
      if (done()) break;
      const cycle = o.order === 'cycle';
      const node = cluster.nodes[cycle ? i % cluster.nodes.length : prng.int(cluster.nodes.length)]!.id;
      const [start, act, end, undo] = steps[o.faults[cycle ? i % o.faults.length : prng.int(o.faults.length)]!];
      await record(start, node, () => act(node));
      await wait(o.durationMs);
      await record(end, node, () => undo(node));
    }
  } finally {
    for (const n of cluster.nodes) {
      if (n.isolated) await record('rejoin', n.id, () => cluster.rejoin(n.id));
      if (n.filler !== null) await record('free-disk', n.id, () => cluster.freeDisk(n.id));
      if (n.paused) await record('resume', n.id, () => cluster.resume(n.id));
      if (n.child === null || n.child.exitCode !== null || n.child.signalCode !== null) await record('restart', n.id, () => cluster.restart(n.id));
    }
  }
}

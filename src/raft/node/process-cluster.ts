// A harness that runs Raft voters as real child processes (dist/src/raft/node-main.js) on
// 127.0.0.1, for the process tests and the bench: free ports, one data directory per node, the
// JSON-lines control channel with request ids, kill -9 and restart on the same port and directory.
// Every running child is killed by its PID on cleanup.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { encodeProposeFrame, parseProposeAck } from './control.js';
import { freePorts } from '../../util/index.js';

/** LOGLINE_RAFT_STDOUT_DIR: where the voters' non-JSON stdout lines go (node-<id>.stdout), e.g. with --trace-gc. */
const otherStdoutDir = process.env['LOGLINE_RAFT_STDOUT_DIR'];

const nodeMain = join(dirname(fileURLToPath(import.meta.url)), '..', 'node-main.js');

export interface NodeStatus {
  nodeId: number;
  role: string;
  epoch: number;
  leaderId: number | null;
  highWatermark: number;
  appliedOffset: number;
  count: number;
  logEndOffset: number;
  /** The voter set in force on this node (KIP-853). */
  voters: number[];
}

export interface ProposeReply {
  ok: boolean;
  epoch?: number;
  baseOffset?: number;
  lastOffset?: number;
  error?: string;
  leaderId?: number | null;
}

export class NodeProcess {
  private child: ChildProcessWithoutNullStreams | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  private exited: Promise<void> = Promise.resolve();
  /** PIDs of every incarnation (for reports). */
  readonly pids: number[] = [];
  stderr = '';

  constructor(readonly id: number, readonly port: number, readonly dir: string, private readonly args: () => string[],
    private readonly execArgv: readonly string[] = []) {}

  get alive(): boolean { return this.child !== undefined; }
  get pid(): number | undefined { return this.child?.pid; }

  async start(): Promise<void> {
    if (this.child !== undefined) throw new Error(`node ${this.id} already running`);
    mkdirSync(this.dir, { recursive: true });
    const child = spawn(process.execPath, [...this.execArgv, nodeMain, ...this.args()], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    if (child.pid !== undefined) this.pids.push(child.pid);
    let started: (() => void) | undefined;
    let failed: ((e: Error) => void) | undefined;
    const ready = new Promise<void>((resolve, reject) => { started = resolve; failed = reject; });
    createInterface({ input: child.stdout }).on('line', (line) => {
      let msg: { id?: number; event?: string };
      const ack = parseProposeAck(line);
      if (ack !== undefined) {
        const p = this.pending.get(ack.id);
        if (p !== undefined) { this.pending.delete(ack.id); p.resolve({ ok: true, epoch: ack.epoch, baseOffset: ack.baseOffset, lastOffset: ack.lastOffset }); }
        return;
      }
      if (line.charCodeAt(0) !== 0x7b) {
        // Not ours (node's --trace-gc writes to stdout): kept for diagnosis when asked.
        if (otherStdoutDir !== undefined) appendFileSync(join(otherStdoutDir, `node-${this.id}.stdout`), `${line}\n`);
        return;
      }
      try { msg = JSON.parse(line) as typeof msg; } catch { return; }
      if (msg.event === 'started') { started!(); return; }
      if (msg.id === undefined) return;
      const p = this.pending.get(msg.id);
      if (p !== undefined) { this.pending.delete(msg.id); p.resolve(msg); }
    });
    child.stderr.on('data', (d: Buffer) => { this.stderr = (this.stderr + d.toString()).slice(-20_000); });
    this.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        if (this.child === child) this.child = undefined;
        const err = new Error(`node ${this.id} exited (${signal ?? code})`);
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
        failed!(err);
        resolve();
      });
    });
    child.stdin.on('error', () => { /* the child died; 'exit' reports it */ });
    await ready;
  }

  request<T = any>(op: object, timeoutMs = 10_000): Promise<T> {
    return this.send<T>((id) => `${JSON.stringify({ ...op, id })}\n`, () => JSON.stringify(op).slice(0, 80), timeoutMs);
  }

  private send<T>(encode: (id: number) => string | Buffer, describe: () => string, timeoutMs: number): Promise<T> {
    const child = this.child;
    if (child === undefined) return Promise.reject(new Error(`node ${this.id} is not running`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => { this.pending.delete(id); reject(new Error(`node ${this.id}: ${describe()} timed out`)); }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => { clearTimeout(timer); resolve(v as T); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
      child.stdin.write(encode(id));
    });
  }

  status(): Promise<NodeStatus> { return this.request<NodeStatus>({ op: 'status' }, 5_000); }

  /** As a binary propose frame (node/control.ts): no JSON on the leader's hot path. */
  propose(values: string[], timeoutMs = 10_000): Promise<ProposeReply> {
    return this.send<ProposeReply>((id) => encodeProposeFrame(id, values), () => `propose of ${values.length} values`, timeoutMs);
  }

  /** The same through the JSON-lines `propose` op. */
  proposeJson(values: string[], timeoutMs = 10_000): Promise<ProposeReply> {
    return this.request<ProposeReply>({ op: 'propose', values }, timeoutMs);
  }

  async read(): Promise<Array<[number, string]>> {
    const all: Array<[number, string]> = [];
    for (;;) {
      const from = all.length === 0 ? 0 : all[all.length - 1]![0] + 1;
      const r = await this.request<{ entries: Array<[number, string]> }>({ op: 'read', from, max: 50_000 }, 20_000);
      all.push(...r.entries);
      if (r.entries.length < 50_000) return all;
    }
  }

  /** kill -9, and wait until the process is gone. */
  async kill9(): Promise<void> {
    const child = this.child;
    if (child === undefined) return;
    process.kill(child.pid!, 'SIGKILL');
    await this.exited;
  }

  /** Closes stdin (the node shuts down cleanly), killing it after `graceMs`. */
  async stop(graceMs = 2_000): Promise<void> {
    const child = this.child;
    if (child === undefined) return;
    child.stdin.end();
    const timer = setTimeout(() => { try { process.kill(child.pid!, 'SIGKILL'); } catch { /* gone */ } }, graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /**
   * Cleanup: SIGKILL the running incarnation by its PID. Exited incarnations are not signalled:
   * their PIDs may belong to someone else's process by now.
   */
  killNow(): void {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
  }
}

export interface ProcessClusterOptions {
  readonly size: number;
  readonly baseDir: string;
  /** Extra node-main properties (key=value), e.g. controller.quorum.election.timeout.ms=200. */
  readonly props?: Readonly<Record<string, string | number>>;
  /** Node options for the children, e.g. ['--cpu-prof']. */
  readonly execArgv?: readonly string[];
}

export class ProcessCluster {
  private constructor(readonly nodes: NodeProcess[], readonly voters: string, private readonly opts: ProcessClusterOptions) {}

  static async start(opts: ProcessClusterOptions): Promise<ProcessCluster> {
    const ports = await freePorts(opts.size);
    const voters = ports.map((p, i) => `${i + 1}@127.0.0.1:${p}`).join(',');
    const extra = Object.entries(opts.props ?? {}).map(([k, v]) => `${k}=${v}`);
    const nodes = ports.map((port, i) => {
      const id = i + 1;
      const dir = join(opts.baseDir, `node-${id}`);
      return new NodeProcess(id, port, dir, () => [`node.id=${id}`, `controller.quorum.voters=${voters}`, `metadata.log.dir=${dir}`, ...extra],
        opts.execArgv);
    });
    const cluster = new ProcessCluster(nodes, voters, opts);
    try {
      await Promise.all(nodes.map((n) => n.start()));
    } catch (err) {
      cluster.killAll();
      throw err;
    }
    return cluster;
  }

  node(id: number): NodeProcess { return this.nodes.find((n) => n.id === id)!; }

  /**
   * Starts one more node (id = the next free one) that is not in controller.quorum.voters: it joins
   * as an observer, listening on its own port, and can then be added as a voter (KIP-853).
   */
  async addObserver(): Promise<NodeProcess> {
    const [port] = await freePorts(1);
    const id = Math.max(...this.nodes.map((n) => n.id)) + 1;
    const dir = join(this.opts.baseDir, `node-${id}`);
    const extra = Object.entries(this.opts.props ?? {}).map(([k, v]) => `${k}=${v}`);
    const node = new NodeProcess(id, port!, dir, () => [
      `node.id=${id}`, `controller.quorum.voters=${this.voters}`, `metadata.log.dir=${dir}`, `listeners=CONTROLLER://127.0.0.1:${port}`, ...extra,
    ], this.opts.execArgv);
    this.nodes.push(node);
    await node.start();
    return node;
  }

  /** Polls the live nodes until one leads (optionally with an epoch above `epochAbove`). */
  async waitForLeader(timeoutMs: number, epochAbove = -1): Promise<{ node: NodeProcess; epoch: number }> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      for (const n of this.nodes) {
        if (!n.alive) continue;
        try {
          const s = await n.status();
          if (s.role === 'leader' && s.epoch > epochAbove) return { node: n, epoch: s.epoch };
        } catch { /* died meanwhile */ }
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no leader with epoch above ${epochAbove} within ${timeoutMs} ms`);
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.stop()));
  }

  killAll(): void {
    for (const n of this.nodes) n.killNow();
  }
}

// What the cluster benchmarks (bench/cluster-metadata.ts, bench/cluster.ts) share: polling with a
// deadline, latency summaries, the machine's state, one connection per broker port that survives a
// killed node, CreateTopics and the metadata quorum's leader through the wire.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BrokerConnection, ClientError, KafkaError } from '../src/client/index.js';
import { ApiKey, ErrorCode, isRetriable } from '../src/protocol/index.js';
import { fsyncFloor } from './limits.js';
import { ServerProcesses, type ServerProcess } from './server-processes.js';

const BIN = fileURLToPath(new URL('../../bin/logline.js', import.meta.url));

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
export const round = (n: number, digits = 1): number => Number(n.toFixed(digits));

/** Polls `probe` until it returns a value (not undefined), at most until the bench's budget runs out. */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, everyMs = 10, timeoutMs = 60_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

export function stats(ms: number[]): Record<string, number> {
  const s = [...ms].sort((a, b) => a - b);
  const p = (q: number): number => round(s[Math.min(s.length - 1, Math.floor(q * s.length))]!, 2);
  return { count: s.length, p50Ms: p(0.5), p90Ms: p(0.9), p99Ms: p(0.99), maxMs: p(1) };
}

/** The machine's state and limits in the same run: load average and the fsync floor on the temp directory's disk. */
export async function machine(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'logline-bench-floor-'));
  try {
    return { loadAverage: loadavg().map((l) => round(l, 2)), fsync200B: await fsyncFloor(dir, 1000) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One connection per broker port, reopened when it is lost (a killed node's requests fail fast). */
export class Connections {
  private readonly open = new Map<number, Promise<BrokerConnection>>();
  constructor(private readonly requestTimeoutMs: number, private readonly clientId = 'bench-cluster') {}

  async to(port: number): Promise<BrokerConnection> {
    const known = this.open.get(port);
    const c = known === undefined ? null : await known.catch(() => null);
    if (c !== null && !c.closed) return c;
    const fresh = BrokerConnection.open({ host: '127.0.0.1', port, clientId: this.clientId, requestTimeoutMs: this.requestTimeoutMs })
      .then(async (x) => { await x.negotiate(); return x; });
    this.open.set(port, fresh);
    fresh.catch(() => this.open.delete(port));
    return fresh;
  }

  /** `send` on the connection to `port`; a lost connection or a timeout gives undefined. */
  async send<T = any>(port: number, apiKey: number, cap: number, body: object): Promise<T | undefined> {
    try {
      const c = await this.to(port);
      return await c.send<T>(apiKey, c.version(apiKey, cap), body);
    } catch (err) {
      if (err instanceof ClientError || err instanceof KafkaError || (err as NodeJS.ErrnoException).code !== undefined) return undefined;
      throw err;
    }
  }

  close(): void {
    for (const p of this.open.values()) p.then((c) => c.close(), () => {});
    this.open.clear();
  }
}

export const createTopic = (name: string, numPartitions: number, replicationFactor: number) =>
  ({ name, numPartitions, replicationFactor, assignments: [], configs: [] });

/** CreateTopics through `port`; the topic's error code, or undefined when the request got no answer. */
export async function create(conns: Connections, port: number, topics: object[]): Promise<number[] | undefined> {
  const r = await conns.send<{ topics: { errorCode: number; errorMessage: string | null }[] }>(port, ApiKey.CreateTopics, 7, { topics, timeoutMs: 10_000, validateOnly: false });
  return r?.topics.map((t) => t.errorCode);
}

/** Creates one topic through a random port of `ports`, retrying retriable answers, until it exists. */
export async function createRetrying(conns: Connections, ports: () => number[], topic: { name: string }): Promise<void> {
  await until(`create ${topic.name}`, async () => {
    const all = ports();
    const codes = await create(conns, all[Math.floor(Math.random() * all.length)]!, [topic]);
    if (codes === undefined) return undefined;
    if (codes[0] === 0 || codes[0] === ErrorCode.TOPIC_ALREADY_EXISTS) return true;
    if (!isRetriable(codes[0]!)) throw new Error(`CreateTopics ${topic.name}: error ${codes[0]}`);
    return undefined;
  }, 20, 30_000);
}

export interface Quorum { leaderId: number; epoch: number; errorCode: number; voters: { replicaId: number; logEndOffset: bigint }[]; highWatermark: bigint }

export async function describeQuorum(conns: Connections, port: number): Promise<Quorum | undefined> {
  const r = await conns.send<any>(port, ApiKey.DescribeQuorum, 1, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] });
  const p = r?.topics?.[0]?.partitions?.[0];
  if (p === undefined) return undefined;
  return { leaderId: p.leaderId, epoch: p.leaderEpoch, errorCode: p.errorCode, voters: p.currentVoters, highWatermark: p.highWatermark };
}

/** The leader as a live node that leads says it (errorCode 0 from the leader itself), with every voter caught up when `caughtUp`. */
export async function steadyLeader(conns: Connections, procs: ServerProcesses, caughtUp: boolean): Promise<{ node: ServerProcess; epoch: number }> {
  return until('a steady leader', async () => {
    for (const n of procs.live) {
      const q = await describeQuorum(conns, n.brokerPort);
      if (q === undefined || q.errorCode !== 0 || q.leaderId !== n.id) continue;
      if (caughtUp && !(q.voters.length === procs.nodes.length && q.voters.every((v) => v.logEndOffset >= q.highWatermark))) return undefined;
      return { node: n, epoch: q.epoch };
    }
    return undefined;
  }, 20, 60_000);
}

export const bootstrapOf = (procs: ServerProcesses): string => procs.nodes.map((n) => `127.0.0.1:${n.brokerPort}`).join(',');

/** `logline bench <args> --json --quiet` against the cluster; its JSON summary. */
export function bench(procs: ServerProcesses, args: string[]): Promise<any> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'bench', ...args, '--json', '--quiet', '--bootstrap-server', bootstrapOf(procs), '--max-seconds', '600'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => { out += d; });
    child.stderr!.on('data', (d) => { err += d; });
    child.on('exit', (code) => {
      try { resolve(JSON.parse(out)); } catch { resolve({ error: `logline bench exited with ${code}: ${err.slice(-500)}` }); }
    });
  });
}

/** The summary's figures that the report keeps. */
export function pick(s: any): Record<string, unknown> {
  if (!s || s.error) return { error: s?.error ?? 'no summary' };
  const out: Record<string, unknown> = { records: s.records, seconds: s.seconds, mbPerSec: s.mbPerSec };
  for (const k of ['latencyMs', 'e2eLatencyMs', 'targetReached']) if (k in s) out[k] = s[k];
  return out;
}

/**
 * One cluster bench's run: its progress lines (stderr), its time budget (LOGLINE_BENCH_BUDGET_S, else
 * `defaultSeconds`: past it the server processes running are stopped and the bench exits 1), and
 * its server processes, started and stopped (by PID) around each part.
 */
export class BenchRun {
  readonly startedAt = performance.now();
  private running: ServerProcesses | null = null;
  private readonly watchdog: NodeJS.Timeout;

  constructor(readonly name: string, defaultSeconds: number) {
    const budgetMs = Number(process.env['LOGLINE_BENCH_BUDGET_S'] ?? defaultSeconds) * 1000;
    this.watchdog = setTimeout(() => {
      this.say(`budget of ${budgetMs / 1000} s exceeded: stopping`);
      void (this.running?.close() ?? Promise.resolve()).finally(() => process.exit(1));
    }, budgetMs);
    this.watchdog.unref();
  }

  say(m: string): void { process.stderr.write(`bench:${this.name} ${m}\n`); }

  seconds(): number { return round((performance.now() - this.startedAt) / 1000); }

  /** Runs `fn` on `n` fresh server processes, stopped (by PID) and removed afterwards. */
  async withNodes<T>(n: number, sets: Record<string, string>, fn: (procs: ServerProcesses, conns: Connections) => Promise<T>): Promise<T> {
    const procs = await ServerProcesses.start(n, sets);
    this.running = procs;
    const conns = new Connections(2000);
    try {
      return await fn(procs, conns);
    } finally {
      conns.close();
      this.running = null;
      await procs.close();
    }
  }

  /** Runs the bench's main: on failure the processes are stopped and the exit code is 1. */
  run(main: () => Promise<void>): void {
    main().catch(async (err: unknown) => {
      process.stderr.write(`bench:${this.name} failed: ${err instanceof Error ? err.stack : String(err)}\n`);
      await this.running?.close().catch(() => {});
      process.exitCode = 1;
    }).finally(() => clearTimeout(this.watchdog));
  }
}

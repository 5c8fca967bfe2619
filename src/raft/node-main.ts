// A runnable Raft voter: `node dist/src/raft/node-main.js node.id=1 controller.quorum.voters=1@127.0.0.1:9093,...
// metadata.log.dir=/tmp/n1 [key=value ...]`. It listens on its own voter address, keeps its quorum
// state in metadata.log.dir/quorum-state and its log in metadata.log.dir/__cluster_metadata-0 (a
// partition log on the storage engine; both fsynced), and replicates a small state machine
// (`state.machine=list` keeps every value, `counter` only totals).
//
// Control surface, for tests and benches: one JSON object per line on stdin, one per line on
// stdout (nothing else is written to stdout; diagnostics go to stderr); proposals may come as
// binary frames instead, acknowledged by short text lines (node/control.ts).
//   {"op":"propose","id":1,"values":["a","b"]} -> {"id":1,"ok":true,"epoch":3,"baseOffset":10,"lastOffset":11}
//                                              or {"id":1,"ok":false,"error":"NOT_LEADER","leaderId":2}
//   a binary propose frame (node/control.ts)  -> r1 3 10 11   (id epoch baseOffset lastOffset), or the JSON refusal
//   {"op":"read","id":2,"from":0,"max":1000}  -> {"id":2,"entries":[[offset,"value"],...]}   (list only)
//   {"op":"status","id":3}                    -> {"id":3,"role":"leader","epoch":3,"leaderId":1,"highWatermark":12,...}
//   {"op":"latency","id":4}                   -> {"id":4,"records":..,"p50Us":..,"p99Us":..,"maxUs":..,"gc":{..},"cpuUserMs":..,"cpuSystemMs":..} (since last asked)
//   {"op":"resign","id":5} / {"op":"snapshot","id":6}
//   {"op":"add-voter","id":7,"voterId":4,"host":"127.0.0.1","port":9097} / {"op":"remove-voter","id":8,"voterId":1}
//                                             -> {"id":7,"ok":true,"epoch":3,"offset":40} once committed (KIP-853)
// A node.id not in controller.quorum.voters starts as an observer; it needs listeners=CONTROLLER://host:port.
// On start it prints {"event":"started","nodeId":1,"port":9093}. End of stdin closes the node.
import { PerformanceObserver } from 'node:perf_hooks';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Histogram } from '../util/index.js';
import { defaultRaftTimeouts, type RaftConfig } from './core/types.js';
import { RaftDriver, RaftError, type StageName } from './driver.js';
import { SocketTransport } from './net/socket-transport.js';
import { ControlReader, proposeAckLine, type ControlInput } from './node/control.js';
import { AppendListStateMachine, CounterStateMachine } from './node/state-machines.js';
import { FileQuorumStateStore } from './store/file.js';
import { METADATA_LOG_DIR_NAME, StorageLogStore } from './store/storage.js';
import { parseQuorumVoters } from './transport.js';

const known: Record<string, string> = {
  'node.id': '',
  'controller.quorum.voters': '',
  'metadata.log.dir': '',
  /** This node's CONTROLLER listener (`CONTROLLER://host:port` or `host:port`); needed by a node not in controller.quorum.voters. */
  'listeners': '',
  'cluster.id': 'logline-raft',
  'controller.quorum.election.timeout.ms': String(defaultRaftTimeouts.electionTimeoutMs),
  'controller.quorum.fetch.timeout.ms': String(defaultRaftTimeouts.fetchTimeoutMs),
  'controller.quorum.election.backoff.max.ms': String(defaultRaftTimeouts.electionBackoffMaxMs),
  'controller.quorum.request.timeout.ms': String(defaultRaftTimeouts.requestTimeoutMs),
  'controller.quorum.retry.backoff.ms': String(defaultRaftTimeouts.retryBackoffMs),
  'fetch.max.wait.ms': String(defaultRaftTimeouts.fetchMaxWaitMs),
  'fetch.max.entries': '8192',
  'state.machine': 'list',
  'snapshot.every.entries': '0',
};

function parseArgs(argv: readonly string[]): Record<string, string> {
  const props = { ...known };
  for (const arg of argv) {
    const eq = arg.indexOf('=');
    const key = eq < 0 ? arg : arg.slice(0, eq);
    if (eq < 0 || !(key in known)) fail(`unknown or malformed argument "${arg}"; known keys: ${Object.keys(known).join(', ')}`);
    props[key] = arg.slice(eq + 1);
  }
  for (const key of ['node.id', 'controller.quorum.voters', 'metadata.log.dir']) if (props[key] === '') fail(`${key} is required`);
  if (props['state.machine'] !== 'list' && props['state.machine'] !== 'counter') fail('state.machine is list or counter');
  return props;
}

function fail(message: string): never {
  process.stderr.write(`raft node: ${message}\n`);
  process.exit(2);
}

function int(props: Record<string, string>, key: string): number {
  const v = Number(props[key]);
  if (!Number.isSafeInteger(v) || v < 0) fail(`${key} must be a non-negative integer`);
  return v;
}

/**
 * One buffer per propose line, the values views into it: an ArrayBuffer per value costs the
 * garbage collector far more than the bytes (the core keeps every entry until a snapshot).
 */
function encodeValues(values: readonly string[]): Uint8Array[] {
  let bytes = 0;
  for (const v of values) bytes += Buffer.byteLength(v);
  const buf = Buffer.allocUnsafeSlow(bytes);
  const out: Uint8Array[] = [];
  let at = 0;
  for (const v of values) {
    const n = buf.write(v, at);
    out.push(buf.subarray(at, at + n));
    at += n;
  }
  return out;
}

/** `CONTROLLER://host:port` or `host:port` (the first listener). */
function listenerOf(value: string, nodeId: number): { nodeId: number; host: string; port: number } | undefined {
  if (value === '') return undefined;
  const m = /^(?:[A-Za-z_]+:\/\/)?\[?([^\]]*?)\]?:(\d+)$/.exec(value.split(',')[0]!.trim());
  if (m === null) fail(`listeners: "${value}" is not CONTROLLER://host:port`);
  return { nodeId, host: m[1]!, port: Number(m[2]) };
}

function out(obj: object): void {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

async function main(): Promise<void> {
  const props = parseArgs(process.argv.slice(2));
  const nodeId = int(props, 'node.id');
  const voters = parseQuorumVoters(props['controller.quorum.voters']!);
  const self = listenerOf(props['listeners']!, nodeId) ?? voters.find((v) => v.nodeId === nodeId);
  if (self === undefined) fail(`node.id ${nodeId} is not in controller.quorum.voters: give its listeners=CONTROLLER://host:port (it starts as an observer)`);
  const dir = props['metadata.log.dir']!;
  const config: RaftConfig = {
    ...defaultRaftTimeouts,
    nodeId, voters: voters.map((v) => v.nodeId),
    voterEndpoints: voters.map((v) => ({ id: v.nodeId, host: v.host, port: v.port })),
    electionTimeoutMs: int(props, 'controller.quorum.election.timeout.ms'),
    fetchTimeoutMs: int(props, 'controller.quorum.fetch.timeout.ms'),
    electionBackoffMaxMs: int(props, 'controller.quorum.election.backoff.max.ms'),
    requestTimeoutMs: int(props, 'controller.quorum.request.timeout.ms'),
    retryBackoffMs: int(props, 'controller.quorum.retry.backoff.ms'),
    fetchMaxWaitMs: int(props, 'fetch.max.wait.ms'),
    fetchMaxEntries: int(props, 'fetch.max.entries'),
    // Randomness enters the core as an input; a real node uses real randomness.
    random: Math.random,
  };
  const list = props['state.machine'] === 'list' ? new AppendListStateMachine() : undefined;
  const counter = list === undefined ? new CounterStateMachine() : undefined;
  const transport = new SocketTransport({
    nodeId, clusterId: props['cluster.id']!, host: self.host, port: self.port, voters, requestTimeoutMs: config.requestTimeoutMs,
    onProtocolError: (reason) => process.stderr.write(`raft node ${nodeId}: dropped a connection: ${reason}\n`),
  });
  // LOGLINE_RAFT_STAGES=DIR: every commit stage with its time (epoch ms) goes to DIR/stages-<id>.tsv
  // at each `latency` op (then reset), for latency breakdowns across the voters and the client.
  const stagesDir = process.env['LOGLINE_RAFT_STAGES'];
  let stages: Array<string | number> = [];
  const stageNow = (): number => performance.timeOrigin + performance.now();
  // Log fsync durations, always (the driver has one in flight at a time): they tell a slow disk from a slow node.
  let fsyncUs = new Histogram();
  let fsyncStartedMs = 0;
  let fsyncSlow = { count: 0, sumMs: 0 };
  const stage = (name: StageName | 'reply', a: number, b: number): void => {
    if (name === 'syncStart') fsyncStartedMs = performance.now();
    else if (name === 'syncDone') {
      const ms = performance.now() - fsyncStartedMs;
      fsyncUs.record(ms * 1000);
      if (ms > 5) { fsyncSlow.count++; fsyncSlow.sumMs += ms; }
    }
    if (stagesDir !== undefined) stages.push(stageNow(), name, a, b);
  };
  const driver = await RaftDriver.start({
    config, quorumStore: new FileQuorumStateStore(dir), logStore: new StorageLogStore(join(dir, METADATA_LOG_DIR_NAME)),
    stateMachine: list ?? counter!, transport, snapshotEveryEntries: int(props, 'snapshot.every.entries'),
    stage,
    ...(process.env['LOGLINE_RAFT_TRACE'] === '1'
      ? { trace: (line: string) => process.stderr.write(`${((performance.timeOrigin + performance.now()) % 100_000).toFixed(2)} n${nodeId} ${line}\n`) } : {}),
    onFatal: (err) => {
      process.stderr.write(`raft node ${nodeId}: invariant violated, stopping: ${err.stack ?? err.message}\n`);
      process.exit(70);
    },
  });
  out({ event: 'started', nodeId, port: transport.port });

  let commitLatencyUs = new Histogram();
  let cpuAt = process.cpuUsage();
  // Garbage-collection pauses since the last `latency` op (kind 1 = scavenge, 2/4/8 = major).
  let gc = { scavenges: 0, scavengeMs: 0, majors: 0, majorMs: 0, maxMs: 0 };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = ((e as unknown as { detail?: { kind?: number } }).detail)?.kind ?? 0;
      if (kind === 1) { gc.scavenges++; gc.scavengeMs += e.duration; } else { gc.majors++; gc.majorMs += e.duration; }
      gc.maxMs = Math.max(gc.maxMs, e.duration);
    }
  }).observe({ entryTypes: ['gc'] });
  // Acknowledgements of one turn leave in one write: the driver resolves many proposals at once.
  let acks = '';
  const flushAcks = (): void => { process.stdout.write(acks); acks = ''; };
  const propose = (id: number | undefined, values: Uint8Array[], binary: boolean): void => {
    const startedMs = performance.now();
    driver.propose(values).then(
      (c) => {
        commitLatencyUs.record((performance.now() - startedMs) * 1000, values.length);
        if (stagesDir !== undefined) stage('reply', c.lastOffset, performance.timeOrigin + startedMs);
        if (!binary) return out({ id, ok: true, epoch: c.epoch, baseOffset: c.baseOffset, lastOffset: c.lastOffset });
        if (acks === '') queueMicrotask(flushAcks);
        acks += proposeAckLine(id!, c.epoch, c.baseOffset, c.lastOffset);
      },
      (e: unknown) => out(e instanceof RaftError
        ? { id, ok: false, error: e.kind, leaderId: e.leaderId ?? null, message: e.message }
        : { id, ok: false, error: 'INTERNAL', message: String(e) }),
    );
  };
  const onLine = (line: string): void => {
    let req: { op?: string; id?: number; values?: unknown; from?: number; max?: number };
    try {
      req = JSON.parse(line) as typeof req;
    } catch {
      return out({ error: 'bad json' });
    }
    const id = req.id;
    switch (req.op) {
      case 'propose': {
        const values = req.values;
        if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === 'string')) {
          return out({ id, ok: false, error: 'values must be a non-empty array of strings' });
        }
        return propose(id, encodeValues(values as string[]), false);
      }
      case 'read': {
        if (list === undefined) return out({ id, error: 'read needs state.machine=list' });
        const from = Number.isSafeInteger(req.from) ? req.from! : 0;
        const max = Math.min(Number.isSafeInteger(req.max) ? req.max! : 10_000, 100_000);
        return out({ id, entries: list.read(from, max) });
      }
      case 'status':
        return out({
          id, nodeId, role: driver.role, epoch: driver.epoch, leaderId: driver.leaderId ?? null, highWatermark: driver.highWatermark,
          appliedOffset: driver.appliedOffset, count: list?.values.length ?? counter!.count, logEndOffset: driver.core.log.endOffset,
          voters: driver.core.voterSet.map((v) => v.id),
        });
      case 'add-voter':
      case 'remove-voter': {
        const voterId = (req as { voterId?: unknown }).voterId;
        if (typeof voterId !== 'number' || !Number.isSafeInteger(voterId)) return out({ id, ok: false, error: 'voterId must be an integer' });
        const { host, port } = req as { host?: unknown; port?: unknown };
        const done = req.op === 'add-voter'
          ? driver.addVoter(typeof host === 'string' && typeof port === 'number' ? { id: voterId, host, port } : { id: voterId })
          : driver.removeVoter(voterId);
        done.then(
          (c) => out({ id, ok: true, epoch: c.epoch, offset: c.lastOffset }),
          (e: unknown) => out(e instanceof RaftError
            ? { id, ok: false, error: e.kind, leaderId: e.leaderId ?? null, message: e.message }
            : { id, ok: false, error: 'INTERNAL', message: String(e) }),
        );
        return;
      }
      case 'latency': {
        // Commit latency as this node sees it (propose line read -> committed), per record; then reset.
        if (stagesDir !== undefined) {
          const lines: string[] = [];
          for (let i = 0; i < stages.length; i += 4) lines.push(`${(stages[i] as number).toFixed(3)}\t${stages[i + 1]}\t${stages[i + 2]}\t${stages[i + 3]}`);
          writeFileSync(join(stagesDir, `stages-${nodeId}.tsv`), `${lines.join('\n')}\n`);
          stages = [];
        }
        const h = commitLatencyUs;
        commitLatencyUs = new Histogram();
        const g = gc;
        gc = { scavenges: 0, scavengeMs: 0, majors: 0, majorMs: 0, maxMs: 0 };
        // CPU time of this process since the last ask: on a shared machine a steadier figure than latency.
        const f = fsyncUs;
        fsyncUs = new Histogram();
        const fsync = {
          count: f.total, p50Ms: f.percentile(50) / 1000, p99Ms: f.percentile(99) / 1000, maxMs: f.total === 0 ? 0 : f.max / 1000,
          // Time spent in fsyncs that took over 5 ms: what a stalled disk adds to the tail.
          over5MsCount: fsyncSlow.count, over5MsSumMs: Math.round(fsyncSlow.sumMs),
        };
        fsyncSlow = { count: 0, sumMs: 0 };
        const cpu = process.cpuUsage(cpuAt);
        cpuAt = process.cpuUsage();
        return out({
          id, records: h.total, p50Us: h.percentile(50), p99Us: h.percentile(99), maxUs: h.total === 0 ? 0 : h.max, gc: g,
          cpuUserMs: cpu.user / 1000, cpuSystemMs: cpu.system / 1000, fsync,
        });
      }
      case 'resign':
        driver.resign();
        return out({ id, ok: true });
      case 'snapshot': {
        const s = driver.requestSnapshot();
        return out({ id, ok: true, snapshotId: s ?? null });
      }
      default:
        return out({ id, error: `unknown op ${String(req.op)}` });
    }
  };
  const reader = new ControlReader();
  const close = (): void => { void driver.close().then(() => process.exit(0)); };
  process.stdin.on('data', (chunk: Buffer) => {
    let inputs: ControlInput[];
    try {
      inputs = reader.push(chunk);
    } catch (err) {
      // The channel cannot be resynchronised after a malformed frame: treat it as closed.
      process.stderr.write(`raft node ${nodeId}: control channel: ${(err as Error).message}; closing\n`);
      process.stdin.destroy();
      return close();
    }
    for (const input of inputs) {
      if (input.kind === 'line') onLine(input.line);
      else propose(input.id, input.values, true);
    }
  });
  process.stdin.on('end', close);
}

main().catch((err: unknown) => {
  process.stderr.write(`raft node: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});

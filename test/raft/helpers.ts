// A small synchronous harness for core tests: cores with fixed randomness, Ready draining, and a
// FIFO "network" that delivers instantly unless a filter drops the message.
import { RaftCore, batchesOf, defaultRaftTimeouts, entriesOf, type Entry, type EntryBatch, type Envelope, type NodeId, type PersistedState, type RaftConfig, type Ready } from '../../src/raft/index.js';

export const enc = new TextEncoder();
export const dec = new TextDecoder();

export function config(nodeId: NodeId, voters: readonly NodeId[], extra: Partial<RaftConfig> = {}): RaftConfig {
  return { ...defaultRaftTimeouts, nodeId, voters, random: () => 0, ...extra };
}

export const empty: PersistedState = { quorumState: undefined, snapshot: undefined, batches: [] };

/** The entries of `entries(spec, start)` as the log's batches. */
export function log(spec: ReadonlyArray<number>, start = 0): EntryBatch[] {
  return batchesOf(entries(spec, start));
}

export function entries(spec: ReadonlyArray<number>, start = 0): Entry[] {
  return spec.map((epoch, i) => ({ offset: start + i, epoch, kind: 'data' as const, value: enc.encode(`e${epoch}-${start + i}`) }));
}

/** Take every Ready until the core is idle, acknowledging each. */
export function drain(core: RaftCore): Ready[] {
  const out: Ready[] = [];
  for (let i = 0; i < 50; i++) {
    const r = core.ready();
    if (r === undefined) break;
    out.push(r);
    core.advance();
  }
  return out;
}

export function sent(readies: readonly Ready[]): Envelope[] {
  return readies.flatMap((r) => r.messages);
}

export class Cluster {
  readonly cores = new Map<NodeId, RaftCore>();
  readonly queue: Envelope[] = [];
  readonly applied = new Map<NodeId, string[]>();
  now = 0;
  drop: (env: Envelope) => boolean = () => false;

  constructor(voters: readonly NodeId[], observers: readonly NodeId[] = [], extra: Partial<RaftConfig> = {}) {
    for (const id of [...voters, ...observers]) {
      // Distinct fixed randomness per node, so election timeouts differ and one node goes first.
      this.cores.set(id, new RaftCore(config(id, voters, { random: () => (id - 1) / 10, ...extra }), empty, 0));
      this.applied.set(id, []);
    }
    for (const id of this.cores.keys()) this.collect(id);
  }

  core(id: NodeId): RaftCore { return this.cores.get(id)!; }

  collect(id: NodeId): void {
    const core = this.core(id);
    for (const r of drain(core)) {
      this.queue.push(...r.messages);
      for (const e of entriesOf(r.committed)) if (e.kind === 'data') this.applied.get(id)!.push(dec.decode(e.value));
    }
  }

  /** Deliver queued messages (and what they cause) until the network is quiet. */
  deliverAll(): void {
    for (let i = 0; i < 10_000 && this.queue.length > 0; i++) {
      const env = this.queue.shift()!;
      if (this.drop(env)) continue;
      const core = this.cores.get(env.to);
      if (core === undefined) continue;
      core.step(env, this.now);
      this.collect(env.to);
    }
  }

  /** Advance time in small steps, ticking every node and delivering everything. */
  run(ms: number, stepMs = 10): void {
    const end = this.now + ms;
    while (this.now < end) {
      this.now += stepMs;
      for (const [id, core] of this.cores) {
        if (core.nextDeadlineMs() <= this.now) {
          core.tick(this.now);
          this.collect(id);
        }
      }
      this.deliverAll();
    }
  }

  leader(): RaftCore | undefined {
    return [...this.cores.values()].find((c) => c.isLeader);
  }

  propose(...values: string[]): void {
    const leader = this.leader();
    if (leader === undefined) throw new Error('no leader');
    const r = leader.propose(values.map((v) => enc.encode(v)), this.now);
    if (!r.ok) throw new Error('not leader');
    this.collect(leader.nodeId);
    this.deliverAll();
  }
}

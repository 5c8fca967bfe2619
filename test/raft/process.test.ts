// Three voters as real processes on 127.0.0.1 (file stores, fsync, the Kafka-framed RPCs). A client
// proposes without pause while the current leader is killed with SIGKILL and restarted, five times.
// Every acknowledged value must be on every node at the offset it was acknowledged with, in the
// order it was proposed, and a new leader (in a newer epoch) must take over after each kill.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addRaftVoter, describeQuorum, removeRaftVoter } from '../../src/raft/index.js';
import { ErrorCode } from '../../src/protocol/index.js';
import { ProcessCluster, type NodeProcess } from '../../src/raft/node/process-cluster.js';

const kills = 5;
// Shorter than Kafka's defaults so five fail-overs fit the time box; generous enough for a
// loaded two-core machine.
const props = {
  'controller.quorum.election.timeout.ms': 300,
  'controller.quorum.fetch.timeout.ms': 600,
  'controller.quorum.request.timeout.ms': 600,
  'fetch.max.wait.ms': 100,
};

interface Ack { seq: number; value: string; offset: number }

class Client {
  readonly acks: Ack[] = [];
  private seq = 0;
  private stopped = false;
  leader: NodeProcess | undefined;
  rejected = 0;

  constructor(private readonly cluster: ProcessCluster) {}

  /** Keeps `window` proposals of one value each in flight to whoever leads. */
  async run(window: number): Promise<void> {
    await Promise.all(Array.from({ length: window }, () => this.lane()));
  }

  stop(): void { this.stopped = true; }

  private finding: Promise<void> | null = null;
  private findLeader(): Promise<void> {
    this.finding ??= this.cluster.waitForLeader(2_000)
      .then(({ node }) => { if (!this.stopped && (this.leader === undefined || !this.leader.alive)) this.leader = node; }, () => {})
      .finally(() => { this.finding = null; });
    return this.finding;
  }

  private async lane(): Promise<void> {
    while (!this.stopped) {
      const leader = this.leader;
      if (leader === undefined || !leader.alive) {
        // As a real client does: find whoever leads now (an election may have followed the one the
        // test waited for, e.g. a voter that timed out under load before hearing of the leader).
        await this.findLeader();
        await new Promise((r) => setTimeout(r, 5));
        continue;
      }
      const seq = this.seq++;
      const value = `v${seq}`;
      try {
        const r = await leader.propose([value], 5_000);
        if (r.ok) this.acks.push({ seq, value, offset: r.baseOffset! });
        else {
          this.rejected++;
          if (this.leader === leader) this.leader = undefined;
        }
      } catch {
        // The leader died with the proposal in flight: not acknowledged, so it may or may not be in the log.
        this.rejected++;
        if (this.leader === leader) this.leader = undefined;
      }
    }
  }
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** On a failure: each node's status (or 'down') and its stderr. */
async function printNodes(cluster: { nodes: { id: number; alive: boolean; stderr: string; status(): Promise<unknown> }[] } | undefined): Promise<void> {
  for (const n of cluster?.nodes ?? []) {
    const status = n.alive ? await n.status().catch((e: Error) => e.message) : 'down';
    console.error(`node ${n.id}: ${JSON.stringify(status)}${n.stderr !== '' ? `\nstderr:\n${n.stderr}` : ''}`);
  }
}

test('three node processes: kill -9 of the leader five times loses and reorders no acknowledged entry', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'logline-raft-process-'));
  let cluster: ProcessCluster | undefined;
  const client: { c?: Client } = {};
  try {
    cluster = await ProcessCluster.start({ size: 3, baseDir: dir, props });
    const c = new Client(cluster);
    client.c = c;
    let { node: leader, epoch } = await cluster.waitForLeader(10_000);

    // DescribeQuorum over the Kafka wire agrees with the control channel. A second election may
    // follow the first (a voter that timed out under load before hearing of the leader): the node
    // that answers NOT_LEADER_OR_FOLLOWER is asked again once the new leader is known.
    let described = await describeQuorum('127.0.0.1', leader.port);
    for (let attempt = 0; described.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER && attempt < 20; attempt++) {
      ({ node: leader, epoch } = await cluster.waitForLeader(10_000, epoch));
      described = await describeQuorum('127.0.0.1', leader.port);
    }
    assert.equal(described.errorCode, 0);
    assert.equal(described.leaderId, leader.id);
    assert.deepEqual(described.voters.map((v) => v.nodeId), [1, 2, 3]);

    c.leader = leader;
    const running = c.run(4);
    const epochs = [epoch];
    for (let k = 0; k < kills; k++) {
      const before = c.acks.length;
      await until('acknowledgements from the leader', 10_000, async () => (c.acks.length >= before + 20 ? true : undefined));
      const victim = leader;
      await victim.kill9();
      ({ node: leader, epoch } = await cluster.waitForLeader(10_000, epoch));
      assert.notEqual(leader.id, victim.id, 'a killed node cannot lead');
      epochs.push(epoch);
      c.leader = leader;
      const after = c.acks.length;
      await until('a commit by the new leader', 10_000, async () => (c.acks.length > after ? true : undefined));
      await victim.start();
    }
    c.stop();
    await running;

    // Every node catches up to the last leader's high watermark, then all logs are compared.
    const final = await leader.status();
    for (const n of cluster.nodes) {
      await until(`node ${n.id} applying up to ${final.highWatermark}`, 15_000, async () => {
        const s = await n.status();
        return s.appliedOffset >= final.highWatermark ? true : undefined;
      });
    }
    const logs = await Promise.all(cluster.nodes.map((n) => n.read()));
    const reference = new Map(logs[0]!.map(([o, v]) => [o, v]));
    for (const [i, log] of logs.entries()) {
      const upTo = log.filter(([o]) => o < final.highWatermark);
      const refUpTo = logs[0]!.filter(([o]) => o < final.highWatermark);
      assert.deepEqual(upTo, refUpTo, `node ${i + 1} applied a different log than node 1`);
      assert.equal(new Set(log.map(([, v]) => v)).size, log.length, `node ${i + 1} applied a value twice`);
    }
    assert.ok(c.acks.length > kills * 20, `only ${c.acks.length} acknowledged`);
    for (const a of c.acks) {
      assert.equal(reference.get(a.offset), a.value, `acknowledged ${a.value} at ${a.offset} is not there on node 1`);
    }
    const bySeq = [...c.acks].sort((a, b) => a.seq - b.seq);
    for (let i = 1; i < bySeq.length; i++) {
      assert.ok(bySeq[i]!.offset > bySeq[i - 1]!.offset, `${bySeq[i]!.value} was committed before ${bySeq[i - 1]!.value}`);
    }
    assert.equal(new Set(epochs).size, epochs.length, 'every fail-over has a new epoch');
    t.diagnostic(`${c.acks.length} acknowledged, ${c.rejected} refused or cut off, leader epochs ${epochs.join(' -> ')}, `
      + `log of ${logs[0]!.length} values on each node`);
    await cluster.stop();
  } catch (err) {
    await printNodes(cluster);
    throw err;
  } finally {
    client.c?.stop();
    cluster?.killAll();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('KIP-853 with processes: a fourth node joins as an observer and is added over AddRaftVoter, then the leader is removed over RemoveRaftVoter and resigns; no acknowledged entry is lost', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'logline-raft-voters-'));
  let cluster: ProcessCluster | undefined;
  const client: { c?: Client } = {};
  try {
    cluster = await ProcessCluster.start({ size: 3, baseDir: dir, props });
    const c = new Client(cluster);
    client.c = c;
    const { node: leader, epoch } = await cluster.waitForLeader(10_000);
    c.leader = leader;
    const running = c.run(2);
    await until('first acknowledgements', 10_000, async () => (c.acks.length >= 20 ? true : undefined));

    // Node 4 starts outside the voter set: an observer that replicates the log.
    const fourth = await cluster.addObserver();
    const leaderStatus = await leader.status();
    await until('node 4 catching up as an observer', 15_000, async () => {
      const s = await fourth.status();
      return s.appliedOffset >= leaderStatus.highWatermark ? true : undefined;
    });
    assert.deepEqual((await fourth.status()).voters, [1, 2, 3]);
    const asObserver = await until('node 4 caught up in DescribeQuorum', 10_000, async () => {
      const d = await describeQuorum('127.0.0.1', leader.port);
      return d.observers.find((o) => o.nodeId === 4 && o.lastCaughtUpMs !== undefined);
    });
    assert.ok(asObserver.endOffset > 0);
    // Asking a follower is refused with NOT_LEADER_OR_FOLLOWER; the leader adds it.
    const follower = cluster.nodes.find((n) => n !== leader && n !== fourth)!;
    const refused = await addRaftVoter('127.0.0.1', follower.port, { clusterId: 'logline-raft', voterId: 4, voterHost: '127.0.0.1', voterPort: fourth.port });
    assert.equal(refused.errorCode, 6);
    // REQUEST_TIMED_OUT (7) is retriable: the leader has not yet seen node 4 with all of its log.
    const added = await until('AddRaftVoter accepted', 10_000, async () => {
      const r = await addRaftVoter('127.0.0.1', leader.port, { clusterId: 'logline-raft', voterId: 4, voterHost: '127.0.0.1', voterPort: fourth.port });
      return r.errorCode === 7 ? undefined : r;
    });
    assert.deepEqual(added, { errorCode: 0, errorMessage: null });
    const again = await addRaftVoter('127.0.0.1', leader.port, { clusterId: 'logline-raft', voterId: 4, voterHost: '127.0.0.1', voterPort: fourth.port });
    assert.equal(again.errorCode, 126, 'DUPLICATE_VOTER');
    for (const n of cluster.nodes) {
      await until(`node ${n.id} seeing four voters`, 10_000, async () => ((await n.status()).voters.length === 4 ? true : undefined));
    }
    const described = await describeQuorum('127.0.0.1', leader.port);
    assert.deepEqual(described.voters.map((v) => v.nodeId), [1, 2, 3, 4]);

    // Remove the leader itself: it answers once the change commits, then resigns; 2, 3, 4 elect.
    const before = c.acks.length;
    const removed = await removeRaftVoter('127.0.0.1', leader.port, { clusterId: 'logline-raft', voterId: leader.id });
    assert.deepEqual(removed, { errorCode: 0, errorMessage: null });
    const next = await cluster.waitForLeader(15_000, epoch);
    assert.notEqual(next.node.id, leader.id);
    c.leader = next.node;
    await until('a commit by the new leader', 10_000, async () => (c.acks.length > before ? true : undefined));
    // The old leader, no longer a voter, finds the current leader as an observer does and follows
    // it (a loaded machine may have seen another election since: the node it follows must lead now).
    let lastSeen = '';
    const current = await until('the removed leader following the current leader', 20_000, async () => {
      const s = await leader.status();
      lastSeen = JSON.stringify({ role: s.role, leaderId: s.leaderId });
      const followed = cluster!.nodes.find((n) => n.id === s.leaderId && n !== leader);
      if (s.role !== 'follower' || followed === undefined) return undefined;
      return (await followed.status()).role === 'leader' ? followed : undefined;
    }).catch((e: unknown) => { throw new Error(`${e instanceof Error ? e.message : String(e)}; the removed node last said ${lastSeen}`); });
    assert.deepEqual([...(await current.status()).voters].sort(), [1, 2, 3, 4].filter((id) => id !== leader.id));
    c.stop();
    await running;

    // Every node, the removed one too (it follows as an observer), applies the same log.
    const final = await current.status();
    for (const n of cluster.nodes) {
      await until(`node ${n.id} applying up to ${final.highWatermark}`, 15_000, async () => {
        const s = await n.status();
        return s.appliedOffset >= final.highWatermark ? true : undefined;
      });
    }
    const logs = await Promise.all(cluster.nodes.map((n) => n.read()));
    const ref = logs[0]!.filter(([o]) => o < final.highWatermark);
    for (const [i, log] of logs.entries()) assert.deepEqual(log.filter(([o]) => o < final.highWatermark), ref, `node ${cluster.nodes[i]!.id}`);
    const reference = new Map(logs[0]!.map(([o, v]) => [o, v]));
    for (const a of c.acks) assert.equal(reference.get(a.offset), a.value, `acknowledged ${a.value} at ${a.offset} is missing`);
    t.diagnostic(`${c.acks.length} acknowledged; leader ${leader.id} (epoch ${epoch}) removed, node ${next.node.id} leads epoch ${next.epoch}`);
    await cluster.stop();
  } catch (err) {
    await printNodes(cluster);
    throw err;
  } finally {
    client.c?.stop();
    cluster?.killAll();
    rmSync(dir, { recursive: true, force: true });
  }
});

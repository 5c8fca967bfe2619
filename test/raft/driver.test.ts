import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AppendListStateMachine, MemoryLogStore, MemoryQuorumStateStore, RaftDriver, RaftError, SocketTransport, defaultRaftTimeouts,
  addRaftVoter, describeQuorum, type RaftConfig,
} from '../../src/raft/index.js';
import { freePorts } from '../../src/util/index.js';

const enc = new TextEncoder();

async function startCluster(size: number): Promise<{ drivers: RaftDriver[]; machines: AppendListStateMachine[]; ports: number[] }> {
  const ports = await freePorts(size);
  const voters = ports.map((port, i) => ({ nodeId: i + 1, host: '127.0.0.1', port }));
  const machines: AppendListStateMachine[] = [];
  const drivers = await Promise.all(voters.map((v) => {
    const config: RaftConfig = {
      ...defaultRaftTimeouts, nodeId: v.nodeId, voters: voters.map((x) => x.nodeId),
      electionTimeoutMs: 150, fetchTimeoutMs: 300, requestTimeoutMs: 300, fetchMaxWaitMs: 50, random: Math.random,
    };
    const sm = new AppendListStateMachine();
    machines.push(sm);
    return RaftDriver.start({
      config, quorumStore: new MemoryQuorumStateStore(), logStore: new MemoryLogStore(), stateMachine: sm,
      transport: new SocketTransport({ nodeId: v.nodeId, clusterId: 'test', host: v.host, port: v.port, voters, requestTimeoutMs: 300 }),
      onFatal: (err) => { throw err; },
    });
  }));
  return { drivers, machines: drivers.map((d) => machines[d.nodeId - 1]!), ports };
}

async function leaderOf(drivers: RaftDriver[], timeoutMs = 10_000): Promise<RaftDriver> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const l = drivers.find((d) => d.role === 'leader');
    if (l !== undefined) return l;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('no leader');
}

test('driver: proposals on the leader resolve with their committed offsets, in order, and reach every state machine', async () => {
  const { drivers, machines } = await startCluster(3);
  try {
    const leader = await leaderOf(drivers);
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => leader.propose([enc.encode(`a${i}`), enc.encode(`b${i}`)])));
    for (let i = 1; i < results.length; i++) assert.equal(results[i]!.baseOffset, results[i - 1]!.lastOffset + 1);
    const last = results[results.length - 1]!.lastOffset;
    const deadline = Date.now() + 5_000;
    while (machines.some((m) => m.values.length < 100) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    for (const m of machines) {
      assert.equal(m.values.length, 100);
      assert.deepEqual(m.read(results[7]!.baseOffset, 2), [[results[7]!.baseOffset, 'a7'], [results[7]!.lastOffset, 'b7']]);
      assert.equal(m.offsets[m.offsets.length - 1], last);
    }
  } finally {
    await Promise.all(drivers.map((d) => d.close()));
  }
});

test('driver: a follower refuses proposals with NOT_LEADER and names the leader; DescribeQuorum answers on the leader only', async () => {
  const { drivers, ports } = await startCluster(3);
  try {
    const leader = await leaderOf(drivers);
    await leader.propose([enc.encode('x')]);
    const follower = drivers.find((d) => d !== leader && d.leaderId === leader.nodeId)!;
    await assert.rejects(follower.propose([enc.encode('y')]), (e: unknown) => e instanceof RaftError && e.kind === 'NOT_LEADER' && e.leaderId === leader.nodeId);
    const onLeader = await describeQuorum('127.0.0.1', ports[leader.nodeId - 1]!);
    assert.equal(onLeader.errorCode, 0);
    assert.equal(onLeader.leaderId, leader.nodeId);
    assert.ok(onLeader.highWatermark >= 2);
    const onFollower = await describeQuorum('127.0.0.1', ports[follower.nodeId - 1]!);
    assert.equal(onFollower.errorCode, 6, 'NOT_LEADER_OR_FOLLOWER');
  } finally {
    await Promise.all(drivers.map((d) => d.close()));
  }
});

test('driver: a snapshot request trims the log below the applied offset; close rejects waiting proposals with SHUTDOWN', async () => {
  const { drivers } = await startCluster(1);
  const [only] = drivers;
  const leader = await leaderOf(drivers);
  assert.equal(leader, only);
  const c = await leader.propose([enc.encode('1'), enc.encode('2')]);
  const id = leader.requestSnapshot();
  assert.deepEqual(id, { endOffset: c.lastOffset + 1, epoch: c.epoch });
  assert.equal(leader.core.log.startOffset, c.lastOffset + 1);
  assert.equal(leader.requestSnapshot(), undefined, 'nothing new to snapshot');
  const pending = leader.propose([enc.encode('3')]);
  await leader.close();
  await assert.rejects(pending, (e: unknown) => e instanceof RaftError && e.kind === 'SHUTDOWN');
});

test('driver: a follower that was down while the leader snapshotted catches up through FetchSnapshot chunks over the wire', async () => {
  const ports = await freePorts(3);
  const voters = ports.map((port, i) => ({ nodeId: i + 1, host: '127.0.0.1', port }));
  const stores = voters.map(() => ({ quorum: new MemoryQuorumStateStore(), log: new MemoryLogStore() }));
  const machines = voters.map(() => new AppendListStateMachine());
  const start = (i: number): Promise<RaftDriver> => {
    const v = voters[i]!;
    const config: RaftConfig = {
      ...defaultRaftTimeouts, nodeId: v.nodeId, voters: voters.map((x) => x.nodeId), electionTimeoutMs: 150, fetchTimeoutMs: 300,
      requestTimeoutMs: 300, fetchMaxWaitMs: 50, snapshotChunkBytes: 64, random: Math.random,
    };
    machines[i] = new AppendListStateMachine();
    return RaftDriver.start({
      config, quorumStore: stores[i]!.quorum, logStore: stores[i]!.log, stateMachine: machines[i]!,
      transport: new SocketTransport({ nodeId: v.nodeId, clusterId: 'test', host: v.host, port: v.port, voters, requestTimeoutMs: 300 }),
      onFatal: (err) => { throw err; },
    });
  };
  const drivers = await Promise.all([0, 1, 2].map(start));
  try {
    const leader = await leaderOf(drivers);
    const lagging = drivers.find((d) => d !== leader)!;
    const li = lagging.nodeId - 1;
    await lagging.close();
    const committed = [];
    for (let i = 0; i < 20; i++) committed.push(await leader.propose([enc.encode(`s${i}`)]));
    const id = leader.requestSnapshot();
    assert.ok(id !== undefined && leader.core.log.startOffset === id.endOffset);
    const after = await leader.propose([enc.encode('after')]);
    drivers[li] = await start(li);
    const deadline = Date.now() + 10_000;
    while (machines[li]!.values.at(-1) !== 'after' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(machines[li]!.values, [...committed.map((_, i) => `s${i}`), 'after']);
    assert.equal(machines[li]!.offsets.at(-1), after.lastOffset);
    assert.ok(drivers[li]!.core.log.startOffset >= id.endOffset, 'the follower installed the snapshot');
  } finally {
    await Promise.all(drivers.map((d) => d.close()));
  }
});

test('driver: AddRaftVoter answers REQUEST_TIMED_OUT once its TimeoutMs passes without the new voter set committing', async () => {
  const ports = await freePorts(4);
  const nodes = ports.map((port, i) => ({ nodeId: i + 1, host: '127.0.0.1', port }));
  const voters = nodes.slice(0, 3);
  const machines = nodes.map(() => new AppendListStateMachine());
  const clusterId = 'test';
  // A long fetch timeout keeps the leader from resigning (check quorum) while the test waits.
  const drivers = await Promise.all(nodes.map((v, i) => RaftDriver.start({
    config: {
      ...defaultRaftTimeouts, nodeId: v.nodeId, voters: voters.map((x) => x.nodeId),
      electionTimeoutMs: 150, fetchTimeoutMs: 5_000, requestTimeoutMs: 300, fetchMaxWaitMs: 50, random: Math.random,
    },
    quorumStore: new MemoryQuorumStateStore(), logStore: new MemoryLogStore(), stateMachine: machines[i]!,
    transport: new SocketTransport({ nodeId: v.nodeId, clusterId, host: v.host, port: v.port, voters, requestTimeoutMs: 300 }),
    onFatal: (err) => { throw err; },
  })));
  try {
    const leader = await leaderOf(drivers.slice(0, 3));
    await leader.propose([enc.encode('x')]);
    const deadline = Date.now() + 10_000;
    while (machines[3]!.values.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(machines[3]!.values, ['x'], 'node 4 follows the log as an observer');
    // Without the two followers, the set {1,2,3,4} has no majority (the leader and node 4).
    for (const d of drivers.slice(0, 3)) if (d !== leader) await d.close();
    const started = Date.now();
    const answer = await addRaftVoter('127.0.0.1', ports[leader.nodeId - 1]!, { clusterId, voterId: 4, voterHost: '127.0.0.1', voterPort: ports[3]!, timeoutMs: 300 });
    const elapsed = Date.now() - started;
    assert.equal(answer.errorCode, 7, `REQUEST_TIMED_OUT, got ${answer.errorCode} ${answer.errorMessage}`);
    assert.ok(elapsed >= 250 && elapsed < 2_500, `answered after ${elapsed} ms for a TimeoutMs of 300`);
    assert.equal(leader.role, 'leader');
  } finally {
    await Promise.all(drivers.map((d) => d.close()));
  }
});

test('driver: a committed control record (the leader\'s epoch start) reaches the state machine\'s position through appliedThrough, before any data', async () => {
  class PositionStateMachine extends AppendListStateMachine {
    through = -1;
    appliedThrough(offset: number): void { this.through = offset; }
  }
  const ports = await freePorts(3);
  const voters = ports.map((port, i) => ({ nodeId: i + 1, host: '127.0.0.1', port }));
  const machines = voters.map(() => new PositionStateMachine());
  const drivers = await Promise.all(voters.map((v, i) => RaftDriver.start({
    config: { ...defaultRaftTimeouts, nodeId: v.nodeId, voters: voters.map((x) => x.nodeId), electionTimeoutMs: 150, fetchTimeoutMs: 300, requestTimeoutMs: 300, fetchMaxWaitMs: 50, random: Math.random },
    quorumStore: new MemoryQuorumStateStore(), logStore: new MemoryLogStore(), stateMachine: machines[i]!,
    transport: new SocketTransport({ nodeId: v.nodeId, clusterId: 'test', host: v.host, port: v.port, voters, requestTimeoutMs: 300 }),
    onFatal: (err) => { throw err; },
  })));
  try {
    await leaderOf(drivers);
    const deadline = Date.now() + 10_000;
    while (machines.some((m) => m.through < 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(machines.map((m) => m.values.length), [0, 0, 0], 'no data yet');
    for (const m of machines) assert.ok(m.through >= 0, `every machine applied through the epoch start (got ${m.through})`);
    const leader = await leaderOf(drivers);
    const r = await leader.propose([enc.encode('x')]);
    assert.ok(r.baseOffset > 0, 'the data comes after the epoch start');
  } finally {
    await Promise.all(drivers.map((d) => d.close()));
  }
});

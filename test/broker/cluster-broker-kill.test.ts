// Three combined broker+controller `logline server` processes, and what every surviving broker's
// Metadata and DescribeCluster say when one of them goes away:
//  - kill -9 of a broker that is not the active controller: still listed shortly after (its session
//    has not run out), fenced within broker.session.timeout.ms; the partitions it led get leaders
//    from their ISR with a higher leader epoch, a partition whose only replica it was goes offline
//    (leader -1); restarted, it is unfenced, listed again and leads that partition again;
//  - SIGTERM: controlled shutdown moves its leaderships before the process exits (exit code 0),
//    well before a session timeout would have fenced it;
//  - kill -9 of the active controller's node: the other two elect a new controller, which fences the
//    dead broker once its session has run out and moves its leaderships.
// Partitions have three replicas in the metadata (the records follow the leaders in a later step;
// the check here is the metadata every broker reports).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterNodeProcesses, controllerIdOn, killProcess, startClusterNodeProcess, within, type ClusterNodeProcess } from './process-helpers.js';
import { ClusterClient, type PartitionInfo } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';

const SESSION_TIMEOUT_MS = 3000;
const HEARTBEAT_INTERVAL_MS = 500;
const NODE_SETTINGS = [`broker.session.timeout.ms=${SESSION_TIMEOUT_MS}`, `broker.heartbeat.interval.ms=${HEARTBEAT_INTERVAL_MS}`];
/** How long after the kill the fencing may take on a loaded machine, on top of the session timeout. */
const FENCE_SLACK_MS = 20_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What one broker reports: the brokers in Metadata and in DescribeCluster, the controller, every topic's partitions. */
interface View { metadataBrokers: number[]; describedBrokers: number[]; controllerId: number; topics: Map<string, PartitionInfo[]> }

async function viewOf(port: number): Promise<View> {
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${port}`, requestTimeoutMs: 5000 });
  try {
    const topics = await client.metadata(null);
    const conn = await client.any();
    const dc = await conn.send<{ errorCode: number; brokers: { brokerId: number }[] }>(ApiKey.DescribeCluster, 0, { includeClusterAuthorizedOperations: false });
    assert.equal(dc.errorCode, 0);
    return {
      metadataBrokers: [...client.brokers.keys()].sort(), describedBrokers: dc.brokers.map((b) => b.brokerId).sort(),
      controllerId: client.controllerId, topics: new Map(topics.map((t) => [t.name, t.partitions])),
    };
  } finally {
    client.close();
  }
}

/** Polls every node in `nodes` until `done` holds for each one's view (a node that does not answer counts as not done). */
async function untilEvery(nodes: ClusterNodeProcess[], timeoutMs: number, what: string, done: (v: View) => boolean): Promise<View[]> {
  return within(timeoutMs, what, (async () => {
    for (;;) {
      const views = await Promise.all(nodes.map((n) => viewOf(n.brokerPort).catch(() => null)));
      if (views.every((v) => v !== null && done(v))) return views as View[];
      await sleep(100);
    }
  })());
}

/** CreateTopics through `node`, retried while no controller is known yet. */
async function createTopic(node: ClusterNodeProcess, topic: object): Promise<void> {
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${node.brokerPort}` });
  try {
    for (;;) {
      const r = await client.admin(ApiKey.CreateTopics, { topics: [{ numPartitions: -1, replicationFactor: -1, assignments: [], configs: [], ...topic }], timeoutMs: 10_000, validateOnly: false }, 7);
      if (r.topics[0].errorCode !== ErrorCode.NOT_CONTROLLER) { assert.equal(r.topics[0].errorCode, 0, r.topics[0].errorMessage); return; }
      await sleep(50);
    }
  } finally {
    client.close();
  }
}

/** Six partitions with three replicas each (every node leads two), led on every node's Metadata. */
async function createLedTopic(nodes: ClusterNodeProcess[], name: string): Promise<PartitionInfo[]> {
  await createTopic(nodes[0]!, { name, numPartitions: 6, replicationFactor: 3 });
  const views = await untilEvery(nodes, 20_000, `${name} led on every node`, (v) => v.topics.get(name)?.every((p) => p.leader >= 0) === true);
  const partitions = views[0]!.topics.get(name)!;
  for (const p of partitions) assert.equal(p.replicas.length, 3);
  for (const n of nodes) assert.ok(partitions.some((p) => p.leader === n.id), `node ${n.id} leads a partition of ${name}`);
  return partitions;
}

/** Every partition `victim` led in `before` has a leader from its earlier ISR, other than it, at a higher epoch. */
function leadershipsMoved(v: View, topic: string, before: PartitionInfo[], victim: number): boolean {
  const now = v.topics.get(topic);
  if (now === undefined) return false;
  return before.filter((p) => p.leader === victim).every((p) => {
    const q = now.find((x) => x.partition === p.partition)!;
    return q.leader >= 0 && q.leader !== victim && p.isr.includes(q.leader) && q.isr.includes(q.leader) && q.leaderEpoch > p.leaderEpoch;
  });
}

const leadsNothing = (v: View, id: number) => [...v.topics.values()].every((ps) => ps.every((p) => p.leader !== id));
const listed = (v: View, id: number) => v.metadataBrokers.includes(id) && v.describedBrokers.includes(id);
const gone = (v: View, id: number) => !v.metadataBrokers.includes(id) && !v.describedBrokers.includes(id);

describe('three logline server processes: a broker killed, shut down, and the active controller killed', { timeout: 120_000 }, () => {
  let nodes: ClusterNodeProcess[] = [];
  let voters = '';
  const others = (id: number) => nodes.filter((n) => n.id !== id);
  const nodeNamed = (id: number) => nodes.find((n) => n.id === id)!;
  const controller = async () => {
    let id = -1;
    await within(20_000, 'a known controller', (async () => { while (id < 0) { id = await controllerIdOn(nodes[0]!.brokerPort); if (id < 0) await sleep(50); } })());
    return id;
  };

  before(async () => {
    ({ nodes, voters } = await clusterNodeProcesses(3, 'll-test-broker-kill'));
    await Promise.all(nodes.map((n) => startClusterNodeProcess(n, voters, NODE_SETTINGS)));
    await untilEvery(nodes, 30_000, 'all three brokers unfenced', (v) => v.metadataBrokers.length === 3);
  });

  after(async () => {
    await Promise.all(nodes.map((n) => (n.child ? killProcess(n.child) : Promise.resolve())));
  });

  test('kill -9 of a broker: listed until its session runs out, then fenced on every survivor with its leaderships moved; restarted, it is listed again', async (t) => {
    const before = await createLedTopic(nodes, 'killed');
    const controllerId = await controller();
    const victim = nodes.find((n) => n.id !== controllerId && before.some((p) => p.leader === n.id))!;
    // A partition whose only replica is the victim: it has no other ISR member to move to.
    await createTopic(nodes[0]!, { name: 'only-on-victim', assignments: [{ partitionIndex: 0, brokerIds: [victim.id] }] });
    await untilEvery(nodes, 20_000, 'only-on-victim led by the victim', (v) => v.topics.get('only-on-victim')?.[0]?.leader === victim.id);
    const survivors = others(victim.id);

    const killedAt = Date.now();
    await killProcess(victim.child!);
    victim.child = null;
    // It heartbeated at most an interval before the kill, so its session cannot run out before
    // SESSION_TIMEOUT_MS - HEARTBEAT_INTERVAL_MS; half the timeout is far enough on the safe side.
    const early = await Promise.all(survivors.map((n) => viewOf(n.brokerPort)));
    const earlyMs = Date.now() - killedAt;
    if (earlyMs < SESSION_TIMEOUT_MS / 2) {
      for (const v of early) assert.ok(listed(v, victim.id), `broker ${victim.id} still listed ${earlyMs} ms after the kill`);
    } else {
      t.diagnostic(`the first look took ${earlyMs} ms: too late to check that broker ${victim.id} is not fenced early`);
    }

    const views = await untilEvery(survivors, SESSION_TIMEOUT_MS + FENCE_SLACK_MS, `broker ${victim.id} fenced and its leaderships moved on every survivor`,
      (v) => gone(v, victim.id) && leadsNothing(v, victim.id) && leadershipsMoved(v, 'killed', before, victim.id));
    // (No lower bound here: a heartbeat delayed on a loaded machine moves the deadline earlier; the
    // early look above is the check that cannot flake.)
    const fencedMs = Date.now() - killedAt;
    for (const v of views) {
      const [offline] = v.topics.get('only-on-victim')!;
      assert.equal(offline!.leader, -1, 'the partition whose only replica died is offline');
      assert.equal(offline!.errorCode, ErrorCode.LEADER_NOT_AVAILABLE);
      for (const p of v.topics.get('killed')!) assert.ok(!p.isr.includes(victim.id), `killed-${p.partition}: the dead broker left the ISR`);
    }
    t.diagnostic(`broker ${victim.id} fenced and its leaderships moved ${fencedMs} ms after the kill (session timeout ${SESSION_TIMEOUT_MS} ms)`);

    await within(45_000, `restart of node ${victim.id}`, startClusterNodeProcess(victim, voters, NODE_SETTINGS));
    await untilEvery(nodes, 30_000, `broker ${victim.id} listed again on every node and leading its only partition`,
      (v) => listed(v, victim.id) && v.topics.get('only-on-victim')?.[0]?.leader === victim.id);
  });

  test('SIGTERM of a broker: its leaderships have moved on every survivor when the process exits, with exit code 0 and without waiting for its session to run out', async (t) => {
    const before = await createLedTopic(nodes, 'shut-down');
    const controllerId = await controller();
    const victim = nodes.find((n) => n.id !== controllerId && before.some((p) => p.leader === n.id))!;
    const survivors = others(victim.id);
    const child = victim.child!;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const termAt = Date.now();
    child.kill('SIGTERM');
    const code = await within(45_000, `exit of node ${victim.id}`, exited);
    const exitMs = Date.now() - termAt;
    victim.child = null;
    const views = await Promise.all(survivors.map((n) => viewOf(n.brokerPort)));
    for (const [i, v] of views.entries()) {
      assert.ok(leadsNothing(v, victim.id), `node ${survivors[i]!.id}: no partition led by broker ${victim.id} once it has exited`);
      assert.ok(leadershipsMoved(v, 'shut-down', before, victim.id), `node ${survivors[i]!.id}: its partitions have leaders from their ISR at a higher epoch`);
    }
    assert.equal(code, 0, victim.log);
    assert.match(victim.log, /pending-controlled-shutdown → shutting-down .*shouldShutDown=true/, 'the controller let it go');
    assert.doesNotMatch(victim.log, /controlled shutdown: not within/);
    assert.ok(exitMs < SESSION_TIMEOUT_MS, `exited ${exitMs} ms after SIGTERM: no faster than being fenced after ${SESSION_TIMEOUT_MS} ms`);
    t.diagnostic(`node ${victim.id} exited ${exitMs} ms after SIGTERM`);
    // The controller fenced it when it let it go.
    await untilEvery(survivors, 10_000, `broker ${victim.id} no longer listed`, (v) => gone(v, victim.id));

    await within(45_000, `restart of node ${victim.id}`, startClusterNodeProcess(victim, voters, NODE_SETTINGS));
    await untilEvery(nodes, 30_000, `broker ${victim.id} listed again on every node`, (v) => listed(v, victim.id));
  });

  test('kill -9 of the active controller\'s node: a new controller is elected, and it fences the dead broker once its session runs out and moves its leaderships', async (t) => {
    const before = await createLedTopic(nodes, 'controller-killed');
    const controllerId = await controller();
    const victim = nodeNamed(controllerId);
    assert.ok(before.some((p) => p.leader === victim.id), 'the controller\'s node leads a partition');
    const survivors = others(victim.id);

    const killedAt = Date.now();
    await killProcess(victim.child!);
    victim.child = null;
    const elected = await untilEvery(survivors, 20_000, 'a new controller named by every survivor',
      (v) => v.controllerId >= 0 && v.controllerId !== victim.id);
    const electedMs = Date.now() - killedAt;
    assert.equal(elected[0]!.controllerId, elected[1]!.controllerId, 'both survivors name the same controller');
    // The new controller starts the dead broker's session afresh, so it is fenced no earlier than
    // a session after the kill.
    if (electedMs < SESSION_TIMEOUT_MS / 2) {
      for (const v of elected) assert.ok(listed(v, victim.id), `broker ${victim.id} still listed ${electedMs} ms after the kill`);
    } else {
      t.diagnostic(`the election was seen ${electedMs} ms after the kill: too late to check that broker ${victim.id} is not fenced early`);
    }
    await untilEvery(survivors, SESSION_TIMEOUT_MS + FENCE_SLACK_MS, `broker ${victim.id} fenced by the new controller and its leaderships moved`,
      (v) => gone(v, victim.id) && leadsNothing(v, victim.id) && leadershipsMoved(v, 'controller-killed', before, victim.id));
    const fencedMs = Date.now() - killedAt;
    assert.ok(fencedMs >= SESSION_TIMEOUT_MS - HEARTBEAT_INTERVAL_MS, `fenced ${fencedMs} ms after the kill, before its ${SESSION_TIMEOUT_MS} ms session could run out`);
    t.diagnostic(`new controller ${elected[0]!.controllerId} seen ${electedMs} ms after the kill; broker ${victim.id} fenced ${fencedMs} ms after it`);
  });
});

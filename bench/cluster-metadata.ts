// Cluster metadata as users feel it, in a 3-node cluster. One JSON object on stdout per
// sub-command (progress on stderr), with the load average and the disk's fsync floor (every
// metadata commit waits for fsyncs) measured in the same run:
//
//   node dist/bench/cluster-metadata.js visible [topics=200]
//     in-process startCluster: CreateTopics (1 partition, 3 replicas), one at a time, each through
//     a random broker over the wire; from send until every node's metadata image holds the topic
//     (onChange hooks on each node's LogMetadata), and until the CreateTopics answer.
//   node dist/bench/cluster-metadata.js failover [repetitions=3]
//     3 `logline server` processes; kill -9 the Raft leader; until a survivor answers DescribeQuorum
//     as the new leader, and until a CreateTopics through a survivor succeeds. Kafka's default
//     quorum timeouts, then tuned ones (election 200 ms, fetch 400 ms).
//   node dist/bench/cluster-metadata.js broker-kill
//     3 processes, a 12-partition topic with 3 replicas (leaders spread); kill -9 a node that is not
//     the active controller and leads partitions; until every survivor's Metadata lists no
//     partition led by it. broker.session.timeout.ms 9000 (Kafka's default), then 2000 with
//     heartbeats every 500 ms.
//   node dist/bench/cluster-metadata.js scale [topics=1000] [partitions=10] [topicsPerRequest=100]
//     3 processes: the topics (1 replica each) in CreateTopics requests of topicsPerRequest topics,
//     all in flight at once through one broker; until every node's Metadata lists every partition.
//     (Processes, not startCluster: in one process the three brokers' partition creation shares
//     one event loop with the Raft replication that makes the metadata visible.)
//
// Every sub-command bounds its own time (LOGLINE_BENCH_BUDGET_S, default 300 s), kills only the
// processes it started (by PID) and removes its temporary directories.
import { loadavg } from 'node:os';
import { startCluster, type ClusterHandle } from '../src/node/index.js';
import { ApiKey, ErrorCode, isRetriable, ZERO_UUID } from '../src/protocol/index.js';
import { Connections, create, createRetrying, createTopic, describeQuorum, machine, round, sleep, stats, steadyLeader, until } from './cluster-tools.js';
import { ServerProcesses } from './server-processes.js';

const say = (m: string): void => { process.stderr.write(`bench:cluster-metadata ${m}\n`); };
const budgetMs = Number(process.env['LOGLINE_BENCH_BUDGET_S'] ?? 300) * 1000;
const startedAt = performance.now();

/** Cleanups still to run (clusters, process groups, directories), run on failure or when the budget runs out. */
const cleanups = new Set<() => Promise<void>>();
async function cleanUp(): Promise<void> {
  for (const c of [...cleanups]) { cleanups.delete(c); await c().catch(() => {}); }
}
const watchdog = setTimeout(() => {
  say(`budget of ${budgetMs / 1000} s exceeded: stopping`);
  void cleanUp().finally(() => process.exit(1));
}, budgetMs);
watchdog.unref();

// ---------------------------------------------------------------------------------------------
// visible: creation until every node's image holds the topic

async function onEveryNode(cluster: ClusterHandle): Promise<void> {
  await until('every node running', async () => (cluster.nodes.every((n) => n.server?.metadata) ? true : undefined));
}

async function visible(topics: number): Promise<Record<string, unknown>> {
  const limits = await machine();
  const cluster = await startCluster({ nodes: 3 });
  const done = async (): Promise<void> => { await cluster.close(); };
  cleanups.add(done);
  const conns = new Connections(30_000, 'bench-cluster-metadata');
  try {
    await onEveryNode(cluster);
    const ports = cluster.nodes.map((n) => n.brokerPort);
    // The topic being created and, per node, when its image first held it.
    let pending: { name: string; seen: (number | undefined)[]; all: () => void } | null = null;
    cluster.nodes.forEach((node, i) => {
      const md = node.server!.metadata!;
      md.onChange(() => {
        const p = pending;
        if (p !== null && p.seen[i] === undefined && md.image.topics.topicsByName.has(p.name)) {
          p.seen[i] = performance.now();
          if (p.seen.every((t) => t !== undefined)) p.all();
        }
      });
    });
    await createRetrying(conns, () => ports, createTopic('warmup', 1, 3));
    const answerMs: number[] = [];
    // Per creation, the nodes' visibility times in order: the first node (usually the active
    // controller), the second, the last (= visible on all nodes).
    const byRankMs: number[][] = [[], [], []];
    const t0 = performance.now();
    for (let i = 0; i < topics; i++) {
      const name = `visible-${i}`;
      let all!: () => void;
      const everywhere = new Promise<void>((r) => { all = r; });
      pending = { name, seen: [undefined, undefined, undefined], all };
      const port = ports[Math.floor(Math.random() * ports.length)]!;
      const sent = performance.now();
      const codes = await create(conns, port, [createTopic(name, 1, 3)]);
      const answered = performance.now();
      if (codes?.[0] !== 0) throw new Error(`CreateTopics ${name}: ${codes === undefined ? 'no answer' : `error ${codes[0]}`}`);
      await everywhere;
      answerMs.push(answered - sent);
      pending.seen.map((t) => t! - sent).sort((a, b) => a - b).forEach((ms, rank) => byRankMs[rank]!.push(ms));
      pending = null;
    }
    return {
      bench: 'cluster-metadata', measure: 'visible', nodes: 3, topics, replicationFactor: 3, totalMs: Math.round(performance.now() - t0),
      visibleOnAllNodes: { ...stats(byRankMs[2]!), targetP99Ms: 50 }, visibleOnFirstNode: stats(byRankMs[0]!), visibleOnSecondNode: stats(byRankMs[1]!),
      createTopicsAnswer: stats(answerMs),
      note: 'all 3 nodes and the client share one event loop (in-process startCluster)', machine: limits, loadAverageAfter: loadavg().map((l) => round(l, 2)),
    };
  } finally {
    conns.close();
    cleanups.delete(done);
    await done();
  }
}

// ---------------------------------------------------------------------------------------------
// failover: kill -9 of the Raft leader until a new one is active

async function failoverRuns(name: string, sets: Record<string, string>, repetitions: number): Promise<Record<string, unknown>> {
  say(`failover, ${name}`);
  const procs = await ServerProcesses.start(3, sets);
  const done = async (): Promise<void> => { await procs.close(); };
  cleanups.add(done);
  const conns = new Connections(1000, 'bench-cluster-metadata');
  try {
    const livePorts = () => procs.live.map((n) => n.brokerPort);
    await createRetrying(conns, livePorts, createTopic('warmup', 1, 1));
    const newLeaderMs: number[] = [];
    const createdMs: number[] = [];
    for (let r = 0; r < repetitions; r++) {
      const { node: victim, epoch } = await steadyLeader(conns, procs, true);
      await sleep(300);
      const killedAt = performance.now();
      await procs.kill9(victim);
      const survivors = procs.live;
      await until('a new leader', async () => {
        for (const n of survivors) {
          const q = await describeQuorum(conns, n.brokerPort);
          if (q !== undefined && q.errorCode === 0 && q.leaderId === n.id && q.epoch > epoch) return true;
        }
        return undefined;
      }, 10, 60_000);
      newLeaderMs.push(performance.now() - killedAt);
      const topic = `after-kill-${r}`;
      await until(`CreateTopics ${topic} through a survivor`, async () => {
        const codes = await create(conns, survivors[r % survivors.length]!.brokerPort, [createTopic(topic, 1, 1)]);
        if (codes === undefined) return undefined;
        if (codes[0] === 0) return true;
        if (!isRetriable(codes[0]!)) throw new Error(`CreateTopics ${topic}: error ${codes[0]}`);
        return undefined;
      }, 10, 60_000);
      createdMs.push(performance.now() - killedAt);
      say(`  kill ${r + 1}: node ${victim.id}, new leader active ${Math.round(newLeaderMs[r]!)} ms, CreateTopics ok ${Math.round(createdMs[r]!)} ms`);
      await procs.startNode(victim);
    }
    const summary = (ms: number[]) => { const s = stats(ms); return { runsMs: ms.map((x) => Math.round(x)), p50Ms: s['p50Ms'], maxMs: s['maxMs'] }; };
    return { props: Object.keys(sets).length === 0 ? 'Kafka defaults (election 1000 ms, fetch 2000 ms)' : sets, newLeaderActive: summary(newLeaderMs), createTopicsThroughSurvivor: summary(createdMs) };
  } finally {
    conns.close();
    cleanups.delete(done);
    await done();
  }
}

async function failover(repetitions: number): Promise<Record<string, unknown>> {
  const limits = await machine();
  const defaults = await failoverRuns('Kafka default timeouts', {}, repetitions);
  const tuned = await failoverRuns('tuned timeouts', {
    'controller.quorum.election.timeout.ms': '200', 'controller.quorum.fetch.timeout.ms': '400',
    'controller.quorum.election.backoff.max.ms': '200', 'controller.quorum.request.timeout.ms': '400',
  }, repetitions);
  return {
    bench: 'cluster-metadata', measure: 'failover', nodes: 3, repetitions,
    defaultTimeouts: { ...defaults, targetMs: 2000 }, tunedTimeouts: tuned,
    machine: limits, loadAverageAfter: loadavg().map((l) => round(l, 2)),
  };
}

// ---------------------------------------------------------------------------------------------
// broker-kill: kill -9 of a broker until no survivor lists a partition led by it

interface MetadataAnswer { brokers: number[]; leaders: number[] }

async function metadataOf(conns: Connections, port: number, topic: string): Promise<MetadataAnswer | undefined> {
  const r = await conns.send<any>(port, ApiKey.Metadata, 12, { topics: [{ name: topic, topicId: ZERO_UUID }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  const t = r?.topics?.[0];
  if (t === undefined || t.errorCode !== 0) return undefined;
  return { brokers: r.brokers.map((b: { nodeId: number }) => b.nodeId), leaders: t.partitions.map((p: { leaderId: number }) => p.leaderId) };
}

async function brokerKillRun(name: string, sets: Record<string, string>): Promise<Record<string, unknown>> {
  say(`broker kill, ${name}`);
  const procs = await ServerProcesses.start(3, sets);
  const done = async (): Promise<void> => { await procs.close(); };
  cleanups.add(done);
  const conns = new Connections(1000, 'bench-cluster-metadata');
  const topic = 'spread';
  try {
    const ports = procs.nodes.map((n) => n.brokerPort);
    await createRetrying(conns, () => ports, createTopic(topic, 12, 3));
    // Every node lists every partition with a leader before the kill.
    await until('the topic led everywhere', async () => {
      const views = await Promise.all(ports.map((p) => metadataOf(conns, p, topic)));
      return views.every((v) => v !== undefined && v.leaders.length === 12 && v.leaders.every((l) => l >= 0)) ? views : undefined;
    }, 50);
    const { node: controller } = await steadyLeader(conns, procs, false);
    const view = (await metadataOf(conns, controller.brokerPort, topic))!;
    const victim = procs.nodes.find((n) => n !== controller && view.leaders.includes(n.id));
    if (victim === undefined) throw new Error(`no node but the controller leads a partition: ${view.leaders}`);
    const ledByVictim = view.leaders.filter((l) => l === victim.id).length;
    const survivors = procs.nodes.filter((n) => n !== victim);
    await sleep(300);
    const killedAt = performance.now();
    await procs.kill9(victim);
    const movedAt = new Map<number, number>();
    const unlistedAt = new Map<number, number>();
    await until('leaders moved on every survivor', async () => {
      await Promise.all(survivors.map(async (n) => {
        const v = await metadataOf(conns, n.brokerPort, topic);
        if (v === undefined) return;
        const now = performance.now();
        if (!unlistedAt.has(n.id) && !v.brokers.includes(victim.id)) unlistedAt.set(n.id, now);
        if (!movedAt.has(n.id) && v.leaders.every((l) => l >= 0 && l !== victim.id)) movedAt.set(n.id, now);
      }));
      return movedAt.size === survivors.length ? true : undefined;
    }, 20, 60_000);
    const after = (m: Map<number, number>) => (m.size === 0 ? null : Math.round(Math.max(...m.values()) - killedAt));
    const result = {
      props: Object.keys(sets).length === 0 ? 'Kafka defaults (broker.session.timeout.ms 9000, broker.heartbeat.interval.ms 2000)' : sets,
      partitions: 12, ledByVictim, leadersMovedOnEverySurvivorMs: after(movedAt), brokerUnlistedOnEverySurvivorMs: after(unlistedAt),
    };
    say(`  ${JSON.stringify(result)}`);
    return result;
  } finally {
    conns.close();
    cleanups.delete(done);
    await done();
  }
}

async function brokerKill(): Promise<Record<string, unknown>> {
  const limits = await machine();
  const defaults = await brokerKillRun('default session timeout', {});
  const tuned = await brokerKillRun('tuned session timeout', { 'broker.session.timeout.ms': '2000', 'broker.heartbeat.interval.ms': '500' });
  return { bench: 'cluster-metadata', measure: 'broker-kill', nodes: 3, defaultSession: defaults, tunedSession: tuned, machine: limits, loadAverageAfter: loadavg().map((l) => round(l, 2)) };
}

// ---------------------------------------------------------------------------------------------
// scale: many topics' partitions visible on every node

/** Partitions of topics named `prefix...` in a node's Metadata for all topics (undefined: no answer). */
async function partitionsListed(conns: Connections, port: number, prefix: string): Promise<number | undefined> {
  const r = await conns.send<any>(port, ApiKey.Metadata, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  if (r === undefined) return undefined;
  let n = 0;
  for (const t of r.topics) if (t.errorCode === 0 && t.name.startsWith(prefix)) n += t.partitions.length;
  return n;
}

async function scale(topics: number, partitions: number, perRequest: number): Promise<Record<string, unknown>> {
  const limits = await machine();
  const procs = await ServerProcesses.start(3, {});
  const done = async (): Promise<void> => { await procs.close(); };
  cleanups.add(done);
  // Long timeouts: a Metadata answer for every topic and a CreateTopics of 1,000 partitions may wait behind partition creation.
  const conns = new Connections(60_000, 'bench-cluster-metadata');
  try {
    const ports = procs.nodes.map((n) => n.brokerPort);
    await createRetrying(conns, () => [ports[0]!], createTopic('warmup', 1, 1));
    const epochBefore = (await steadyLeader(conns, procs, true)).epoch;
    const want = topics * partitions;
    const requests = Math.ceil(topics / perRequest);
    const answeredMs: number[] = [];
    const retried: string[] = [];
    const t0 = performance.now();
    // Every request in flight at once through node 1 (a non-controller node forwards them).
    const creating = Promise.all(Array.from({ length: requests }, async (_, r) => {
      let batch = Array.from({ length: Math.min(perRequest, topics - r * perRequest) }, (_, k) => createTopic(`scale-${r * perRequest + k}`, partitions, 1));
      // Topics refused with a retriable error (a controller change under load) are sent again; an
      // earlier attempt may have committed them after all.
      for (let attempt = 0; batch.length > 0; attempt++) {
        if (attempt > 20) throw new Error(`CreateTopics request ${r}: ${batch.length} topics still refused after 20 attempts`);
        const codes = await create(conns, ports[0]!, batch);
        if (codes === undefined) { retried.push(`request ${r}: no answer at ${Math.round(performance.now() - t0)} ms`); continue; }
        const failed = codes.flatMap((c, k) => (c === 0 || (attempt > 0 && c === ErrorCode.TOPIC_ALREADY_EXISTS) ? [] : [{ c, k }]));
        const fatal = failed.find(({ c }) => !isRetriable(c));
        if (fatal !== undefined) throw new Error(`CreateTopics request ${r}: error ${fatal.c}`);
        if (failed.length > 0) { retried.push(`request ${r}: ${failed.length} x error ${failed[0]!.c} at ${Math.round(performance.now() - t0)} ms`); await sleep(100); }
        batch = failed.map(({ k }) => batch[k]!);
      }
      answeredMs.push(performance.now() - t0);
    }));
    // Each node's Metadata (every topic) polled until it lists every partition: the figure is
    // good to about one poll (a poll of 10,000 partitions takes tens of milliseconds per node).
    const visibleMs = new Map<number, number>();
    const polls: number[] = [];
    const pollingOk = until('every partition listed by every node', async () => {
      await Promise.all(procs.nodes.filter((n) => !visibleMs.has(n.id)).map(async (n) => {
        const p0 = performance.now();
        const listed = await partitionsListed(conns, n.brokerPort, 'scale-');
        polls.push(performance.now() - p0);
        if (listed === want) visibleMs.set(n.id, performance.now() - t0);
      }));
      return visibleMs.size === procs.nodes.length ? true : undefined;
    }, 50, 240_000);
    await Promise.all([creating, pollingOk]);
    const epochAfter = (await steadyLeader(conns, procs, false)).epoch;
    return {
      bench: 'cluster-metadata', measure: 'scale', nodes: 3, topics, partitionsPerTopic: partitions, partitions: want, topicsPerRequest: perRequest, replicationFactor: 1,
      requests, retried, quorumEpochs: [epochBefore, epochAfter], firstAnswerMs: Math.round(Math.min(...answeredMs)), lastAnswerMs: Math.round(Math.max(...answeredMs)),
      listedByNodeMs: procs.nodes.map((n) => Math.round(visibleMs.get(n.id)!)), listedByEveryNodeMs: Math.round(Math.max(...visibleMs.values())), targetMs: 5000,
      metadataPollMs: stats(polls), note: '3 logline server processes; node 1 took the CreateTopics requests', machine: limits, loadAverageAfter: loadavg().map((l) => round(l, 2)),
    };
  } finally {
    conns.close();
    cleanups.delete(done);
    await done();
  }
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const [what, ...args] = process.argv.slice(2);
  const num = (i: number, dflt: number): number => {
    const v = Number(args[i] ?? dflt);
    if (!Number.isInteger(v) || v < 1) throw new Error(`argument ${i + 1}: expected a positive integer, got ${args[i]}`);
    return v;
  };
  let result: Record<string, unknown>;
  switch (what) {
    case 'visible': result = await visible(num(0, 200)); break;
    case 'failover': result = await failover(num(0, Number(process.env['LOGLINE_BENCH_REPETITIONS'] ?? 3))); break;
    case 'broker-kill': result = await brokerKill(); break;
    case 'scale': result = await scale(num(0, 1000), num(1, 10), num(2, 100)); break;
    default:
      process.stderr.write('usage: node dist/bench/cluster-metadata.js visible [topics] | failover [repetitions] | broker-kill | scale [topics] [partitions] [topicsPerRequest]\n');
      process.exitCode = 2;
      return;
  }
  console.log(JSON.stringify({ ...result, node: process.version, benchSeconds: round((performance.now() - startedAt) / 1000) }));
}

main().catch(async (err: unknown) => {
  process.stderr.write(`bench:cluster-metadata failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  await cleanUp();
  process.exitCode = 1;
}).finally(() => clearTimeout(watchdog));

// Several nodes sharing one metadata log over the network (startCluster): a leader is elected,
// topics created through any node appear with the same ids and partitions on every node, the
// Raft leader can be killed (a new one is elected and creations go on) and restarted (it catches
// up and holds the same topics).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, startServer, type ClusterHandle, type ServerHandle } from '../../src/index.js';
import { freePort } from '../../src/util/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode, ZERO_UUID } from '../../src/protocol/index.js';
import { spawnSync } from 'node:child_process';
import { Kafka, logLevel } from 'kafkajs';
import { runProcess, tempDataDir, within } from '../broker/process-helpers.js';
import { addRaftVoter, describeQuorum } from '../../src/raft/index.js';

const hasKcat = spawnSync('kcat', ['-V']).status === 0;

/** Fast elections: a killed leader is replaced in well under a second. */
const FAST_RAFT = {
  'controller.quorum.election.timeout.ms': '300',
  'controller.quorum.fetch.timeout.ms': '600',
  'controller.quorum.election.backoff.max.ms': '300',
  'controller.quorum.request.timeout.ms': '600',
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function clientOf(port: number): ClusterClient {
  return new ClusterClient({ bootstrap: `127.0.0.1:${port}` });
}

async function waitForLeader(cluster: ClusterHandle, except?: number): Promise<number> {
  for (;;) {
    for (const n of cluster.nodes) {
      if (n.server?.metadata?.isActiveController() && n.nodeId !== except) return n.nodeId;
    }
    await sleep(20);
  }
}

/** Creates a topic through the node at `port`, retrying what Kafka calls retriable (NOT_CONTROLLER during an election). */
async function createTopic(port: number, name: string, partitions: number, retry = true): Promise<{ errorCode: number; topicId: string }> {
  for (let attempt = 0; ; attempt++) {
    assert.ok(attempt < 200, `${name}: NOT_CONTROLLER 200 times`);
    const client = clientOf(port);
    try {
      const r = await client.admin(ApiKey.CreateTopics, { topics: [{ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false }, 7);
      const t = r.topics[0];
      if (t.errorCode === ErrorCode.NOT_CONTROLLER && retry) { await sleep(50); continue; }
      return { errorCode: t.errorCode, topicId: t.topicId };
    } finally {
      client.close();
    }
  }
}

/** name → "id/partition count" as one node's Metadata answers. */
async function topicsOn(port: number): Promise<Map<string, string>> {
  const client = clientOf(port);
  try {
    const topics = await client.metadata(null);
    return new Map(topics.map((t) => [t.name, `${t.topicId}/${t.partitions.length}`]));
  } finally {
    client.close();
  }
}

/** Until every running node's Metadata lists the same topics as `expected`. */
async function converged(cluster: ClusterHandle, expected: Map<string, string>): Promise<void> {
  for (;;) {
    const views = await Promise.all(cluster.nodes.filter((n) => n.running && n.roles.includes('broker')).map((n) => topicsOn(n.brokerPort)));
    if (views.every((v) => v.size === expected.size && [...expected].every(([k, x]) => v.get(k) === x))) return;
    await sleep(50);
  }
}

test('startCluster(3): one metadata log, topics on every node, the leader killed and restarted', { timeout: 120_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({ nodes: 3, config: FAST_RAFT }));
  try {
    assert.equal(cluster.bootstrap.split(',').length, 3);
    const leader = await within(20_000, 'a leader', waitForLeader(cluster));
    const leaderNode = cluster.nodes.find((n) => n.nodeId === leader)!;
    const other = cluster.nodes.find((n) => n.nodeId !== leader)!;
    const expected = new Map<string, string>();

    // Through the leader's broker.
    const a = await createTopic(leaderNode.brokerPort, 'through-leader', 3);
    assert.equal(a.errorCode, 0);
    expected.set('through-leader', `${a.topicId}/3`);
    // Through a broker that is not the controller: forwarded, and visible on that broker at once.
    const b = await createTopic(other.brokerPort, 'through-follower', 2, false);
    assert.equal(b.errorCode, 0);
    expected.set('through-follower', `${b.topicId}/2`);
    assert.equal((await topicsOn(other.brokerPort)).get('through-follower'), `${b.topicId}/2`, 'the forwarding broker answers once its own image has the topic');
    // A second creation of the same topic through another node is refused by the controller.
    assert.equal((await createTopic(cluster.nodes.find((n) => n.nodeId !== leader && n !== other)!.brokerPort, 'through-follower', 2)).errorCode, ErrorCode.TOPIC_ALREADY_EXISTS);
    await within(20_000, 'all nodes list the topics', converged(cluster, expected));

    // The cluster's feature levels (bootstrap metadata) were written once and reached every node.
    const levels = cluster.nodes.map((n) => JSON.stringify([...n.server!.metadata!.image.features.finalizedVersions].sort()));
    assert.ok(levels[0] !== '[]', 'feature levels are finalized');
    assert.deepEqual(levels, [levels[0], levels[0], levels[0]]);

    // Every node names the same controller, and lists every broker.
    for (const n of cluster.nodes) {
      const client = clientOf(n.brokerPort);
      try {
        await client.metadata(null);
        assert.equal(client.controllerId, leader, `node ${n.nodeId} names the controller`);
        assert.deepEqual([...client.brokers.keys()].sort(), [1, 2, 3]);
      } finally {
        client.close();
      }
    }

    // Partitions, configs and deletion through a broker that is not the controller: forwarded, and
    // that broker answers once its own image shows the change.
    {
      const client = clientOf(other.brokerPort);
      try {
        const grown = await client.admin(ApiKey.CreatePartitions, { topics: [{ name: 'through-leader', count: 5, assignments: null }], timeoutMs: 10_000, validateOnly: false }, 3);
        assert.equal(grown.results[0].errorCode, 0);
        assert.equal((await topicsOn(other.brokerPort)).get('through-leader'), `${a.topicId}/5`);
        expected.set('through-leader', `${a.topicId}/5`);
        const altered = await client.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: 2, resourceName: 'through-leader', configs: [{ name: 'retention.ms', configOperation: 0, value: '3600000' }] }], validateOnly: false }, 1);
        assert.equal(altered.responses[0].errorCode, 0);
        const described = await client.admin(ApiKey.DescribeConfigs, { resources: [{ resourceType: 2, resourceName: 'through-leader', configurationKeys: ['retention.ms'] }], includeSynonyms: false, includeDocumentation: false }, 4);
        assert.equal(described.results[0].configs[0].value, '3600000');
        // A config of this broker itself (not the cluster default), asked of it: forwarded too.
        const own = String(other.nodeId);
        const perBroker = await client.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: 4, resourceName: own, configs: [{ name: 'log.retention.ms', configOperation: 0, value: '7200000' }] }], validateOnly: false }, 1);
        assert.equal(perBroker.responses[0].errorCode, 0, perBroker.responses[0].errorMessage);
        const brokerDescribed = await client.admin(ApiKey.DescribeConfigs, { resources: [{ resourceType: 4, resourceName: own, configurationKeys: ['log.retention.ms'] }], includeSynonyms: false, includeDocumentation: false }, 4);
        assert.deepEqual([brokerDescribed.results[0].configs[0].value, brokerDescribed.results[0].configs[0].configSource], ['7200000', 2], 'DYNAMIC_BROKER_CONFIG');
        const created = await createTopic(other.brokerPort, 'to-delete', 1, false);
        assert.equal(created.errorCode, 0);
        const deleted = await client.admin(ApiKey.DeleteTopics, { topics: [{ name: 'to-delete', topicId: ZERO_UUID }], topicNames: ['to-delete'], timeoutMs: 10_000 }, 6);
        assert.equal(deleted.responses[0].errorCode, 0);
        assert.equal((await topicsOn(other.brokerPort)).has('to-delete'), false);
      } finally {
        client.close();
      }
      await within(20_000, 'all nodes agree after the changes', converged(cluster, expected));
    }

    // Producer ids and internal topics through a broker that is not the controller.
    const pids: bigint[] = [];
    for (const n of [other, leaderNode, other]) {
      const conn = await clientOf(n.brokerPort).broker(n.nodeId);
      try {
        const r = await conn.send(ApiKey.InitProducerId, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
        assert.equal(r.errorCode, 0, `InitProducerId through node ${n.nodeId}`);
        pids.push(r.producerId);
      } finally {
        conn.close();
      }
    }
    assert.equal(new Set(pids).size, 3, `producer ids never repeat across nodes: ${pids.join(',')}`);
    {
      const conn = await clientOf(other.brokerPort).broker(other.nodeId);
      try {
        const r = await conn.send(ApiKey.FindCoordinator, 3, { key: 'g1', keyType: 0, coordinatorKeys: [] });
        assert.equal(r.errorCode, 0, 'FindCoordinator through a node that is not the controller');
      } finally {
        conn.close();
      }
      const offsets = (await topicsOn(other.brokerPort)).get('__consumer_offsets');
      assert.ok(offsets !== undefined, '__consumer_offsets was created by the controller');
      expected.set('__consumer_offsets', offsets);
      await within(20_000, 'all nodes list __consumer_offsets', converged(cluster, expected));
    }
    if (hasKcat) {
      const list = await runProcess('kcat', ['-L', '-b', cluster.bootstrap, '-J', '-m', '10']);
      assert.equal(list.code, 0, list.stderr);
      const meta = JSON.parse(list.stdout);
      assert.deepEqual(meta.brokers.map((b: { id: number }) => b.id).sort(), [1, 2, 3]);
      assert.deepEqual(new Map(meta.topics.map((t: { topic: string; partitions: unknown[] }) => [t.topic, t.partitions.length])),
        new Map([...expected].map(([k, v]) => [k, Number(v.split('/')[1])])), 'kcat -L lists what Metadata lists');
    }

    for (const n of cluster.nodes) assert.equal(n.server!.stats.handlerErrors, 0, `node ${n.nodeId}: no request made a handler throw`);

    // Kill the Raft leader: another is elected and creations continue.
    await leaderNode.kill();
    const next = await within(20_000, 'a new leader', waitForLeader(cluster, leader));
    assert.notEqual(next, leader);
    const survivor = cluster.nodes.find((n) => n.running && n.nodeId !== next)!;
    const c = await createTopic(survivor.brokerPort, 'after-kill', 1);
    assert.equal(c.errorCode, 0);
    expected.set('after-kill', `${c.topicId}/1`);
    await within(20_000, 'the two survivors agree', converged(cluster, expected));

    // Restart it: it catches up and holds the same topics.
    await within(60_000, 'restart', leaderNode.restart());
    assert.equal(leaderNode.running, true);
    const d = await createTopic(leaderNode.brokerPort, 'after-restart', 2);
    assert.equal(d.errorCode, 0);
    expected.set('after-restart', `${d.topicId}/2`);
    await within(20_000, 'all three agree again', converged(cluster, expected));
  } finally {
    await cluster.close();
  }
});

test('a process.roles=broker node is an observer of the quorum: it replays the metadata log, and its changes go to the controller', { timeout: 90_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({ nodes: 3, config: FAST_RAFT }));
  const brokerPort = await freePort();
  const config = parseBrokerConfig({
    'node.id': '4', 'process.roles': 'broker', 'listeners': `PLAINTEXT://127.0.0.1:${brokerPort}`, 'controller.listener.names': 'CONTROLLER',
    'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT', 'controller.quorum.voters': cluster.controllerQuorumVoters, ...FAST_RAFT,
    'http.listener': '127.0.0.1:0',
  });
  let observer: ServerHandle | undefined;
  try {
    const leader = await within(20_000, 'a leader', waitForLeader(cluster));
    const before = await createTopic(cluster.nodes[0]!.brokerPort, 'before-observer', 2);
    assert.equal(before.errorCode, 0);
    observer = await within(30_000, 'the observer starts', startServer({ config, dataDir: tempDataDir(), clusterId: cluster.clusterId }));
    assert.equal(observer.metadata!.raft.core.isVoter, false);
    // Created through the observer: forwarded to the controller, visible on the observer at once.
    const through = await createTopic(brokerPort, 'through-observer', 1, false);
    assert.equal(through.errorCode, 0);
    const expected = new Map([['before-observer', `${before.topicId}/2`], ['through-observer', `${through.topicId}/1`]]);
    assert.deepEqual(await topicsOn(brokerPort), expected);
    await within(20_000, 'the voters agree', converged(cluster, expected));
    // The leader reports the observer in DescribeQuorum.
    const description = cluster.nodes.find((n) => n.nodeId === leader)!.server!.metadata!.describeQuorum();
    assert.deepEqual(description.observers.map((o) => o.nodeId), [4]);
  } finally {
    await observer?.close();
    await cluster.close();
  }
});

test('startCluster({ controllers: 3, brokers: 3 }): controller-only nodes hold the quorum, brokers reach the active one on its controller listener, and a controller killed is replaced', { timeout: 120_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({ controllers: 3, brokers: 3, config: FAST_RAFT }));
  try {
    assert.deepEqual(cluster.nodes.map((n) => [n.nodeId, n.roles.join(',')]), [[1, 'controller'], [2, 'controller'], [3, 'controller'], [4, 'broker'], [5, 'broker'], [6, 'broker']]);
    assert.equal(cluster.controllerQuorumVoters.split(',').length, 3);
    const brokers = cluster.nodes.filter((n) => n.roles.includes('broker'));
    assert.equal(cluster.bootstrap, brokers.map((n) => `127.0.0.1:${n.brokerPort}`).join(','));
    // A controller-only node has no broker: nothing a client could connect to but the controller listener.
    for (const c of cluster.nodes.filter((n) => !n.roles.includes('broker'))) {
      assert.equal(c.server!.broker, null);
      assert.deepEqual(c.server!.listeners, []);
    }
    // Every broker lists the three brokers (controllers never register) and, as Kafka in KRaft,
    // names as the controller a live broker a client can reach (a controller-only node it could
    // not), the same one on every broker.
    const named = new Set<number>();
    for (const b of brokers) {
      const client = clientOf(b.brokerPort);
      try {
        const c = await client.any();
        const md = await c.send<{ brokers: { nodeId: number }[]; controllerId: number }>(ApiKey.Metadata, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
        assert.deepEqual(md.brokers.map((x) => x.nodeId).sort(), [4, 5, 6]);
        assert.ok([4, 5, 6].includes(md.controllerId), `controller ${md.controllerId}`);
        named.add(md.controllerId);
      } finally {
        client.close();
      }
    }
    assert.equal(named.size, 1, `one controller named: ${[...named]}`);
    // A creation through a broker is forwarded to the controller and visible on that broker at once.
    const made = await createTopic(brokers[0]!.brokerPort, 'split-a', 6);
    assert.equal(made.errorCode, 0);
    assert.equal((await topicsOn(brokers[0]!.brokerPort)).get('split-a'), `${made.topicId}/6`);
    const expected = new Map([['split-a', `${made.topicId}/6`]]);
    await within(20_000, 'every broker sees split-a', converged(cluster, expected));
    // Partitions are placed on brokers only, spread over all three.
    const client = clientOf(brokers[1]!.brokerPort);
    try {
      const [t] = await client.metadata(['split-a']);
      assert.deepEqual([...new Set(t!.partitions.map((p) => p.leader))].sort(), [4, 5, 6]);
      // DescribeQuorum through a broker-only node: forwarded to the leader, which knows the voters and observers.
      const c = await client.any();
      const dq = await c.send<any>(ApiKey.DescribeQuorum, 2, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] });
      const p = dq.topics[0].partitions[0];
      assert.equal(p.errorCode, 0);
      assert.deepEqual(p.currentVoters.map((v: any) => v.replicaId).sort(), [1, 2, 3]);
      assert.deepEqual(p.observers.map((v: any) => v.replicaId).sort(), [4, 5, 6]);
      assert.equal(p.leaderId, await waitForLeader(cluster));
    } finally {
      client.close();
    }
    // The active controller dies: another controller takes over and creations through brokers go on.
    const first = await waitForLeader(cluster);
    await cluster.nodes.find((n) => n.nodeId === first)!.kill();
    const second = await within(20_000, 'a new controller', waitForLeader(cluster, first));
    assert.ok([1, 2, 3].includes(second) && second !== first);
    const after = await within(30_000, 'creation after failover', createTopic(brokers[2]!.brokerPort, 'split-b', 2));
    assert.equal(after.errorCode, 0);
    expected.set('split-b', `${after.topicId}/2`);
    await within(20_000, 'every broker sees split-b', converged(cluster, expected));
    await cluster.nodes.find((n) => n.nodeId === first)!.restart();
    assert.deepEqual([...cluster.nodes.find((n) => n.nodeId === first)!.server!.metadata!.view().topics()].map((t) => t.name).sort(), ['split-a', 'split-b']);
    // kafkajs sends its admin requests and an idempotent producer's InitProducerId to that id.
    const kafka = new Kafka({ clientId: 'split-kafkajs', brokers: cluster.bootstrap.split(','), logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    try {
      await admin.connect();
      assert.equal(await admin.createTopics({ topics: [{ topic: 'split-kafkajs', numPartitions: 2, replicationFactor: 3 }], waitForLeaders: true }), true);
      await producer.connect();
      const sent = await producer.send({ topic: 'split-kafkajs', acks: -1, messages: [{ key: 'k', value: 'v' }] });
      assert.equal(sent[0]!.errorCode, 0);
    } finally {
      await producer.disconnect();
      await admin.disconnect();
    }
  } finally {
    await cluster.close();
  }
});

test('controller.quorum.bootstrap.servers (KIP-853): a broker learns the voters from the quorum, registers and follows the metadata; a controller outside the voter set starts as an observer and becomes a voter with AddRaftVoter', { timeout: 120_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({ nodes: 3, config: FAST_RAFT }));
  const extra: ServerHandle[] = [];
  try {
    const made = await createTopic(cluster.nodes[0]!.brokerPort, 'before-join', 3);
    assert.equal(made.errorCode, 0);
    const bootstrapServers = cluster.nodes.map((n) => `127.0.0.1:${n.controllerPort}`).join(',');
    const common = { 'controller.listener.names': 'CONTROLLER', 'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT', 'controller.quorum.bootstrap.servers': bootstrapServers, ...FAST_RAFT, 'http.listener': '127.0.0.1:0' };
    // A broker with no controller.quorum.voters at all.
    const broker = await within(60_000, 'the bootstrapped broker', startServer({
      dataDir: tempDataDir(), clusterId: cluster.clusterId,
      config: parseBrokerConfig({ ...common, 'node.id': '7', 'process.roles': 'broker', 'listeners': 'PLAINTEXT://127.0.0.1:0' }),
    }));
    extra.push(broker);
    assert.deepEqual(broker.metadata!.view().topic('before-join')?.id, made.topicId);
    const client = clientOf(cluster.nodes[0]!.brokerPort);
    try {
      await within(20_000, 'broker 7 listed', (async () => {
        for (;;) {
          const c = await client.any();
          const md = await c.send<{ brokers: { nodeId: number }[] }>(ApiKey.Metadata, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
          if (md.brokers.some((b) => b.nodeId === 7)) return;
          await sleep(50);
        }
      })());
    } finally {
      client.close();
    }
    // DescribeQuorum v2 names each voter's controller endpoint (what the broker learnt).
    const leader = await waitForLeader(cluster);
    const leaderPort = cluster.nodes.find((n) => n.nodeId === leader)!.controllerPort;
    const described = await describeQuorum('127.0.0.1', leaderPort);
    assert.deepEqual(described.voterEndpoints!.map((v) => `${v.nodeId}@${v.host}:${v.port}`).sort(), cluster.controllerQuorumVoters.split(',').sort());
    assert.ok(described.observers.some((o) => o.nodeId === 7), 'broker 7 fetches as an observer');
    // A controller that is not a voter yet: an observer on its own controller listener, then added.
    const port = await freePort();
    const controller = await within(60_000, 'the bootstrapped controller', startServer({
      dataDir: tempDataDir(), clusterId: cluster.clusterId,
      config: parseBrokerConfig({ ...common, 'node.id': '8', 'process.roles': 'controller', 'listeners': `CONTROLLER://127.0.0.1:${port}` }),
    }));
    extra.push(controller);
    assert.equal(controller.broker, null);
    assert.equal(controller.metadata!.raft.core.isVoter, false);
    // The leader refuses (REQUEST_TIMED_OUT, retriable) until it has seen the observer fetch up to its log end.
    let added = await addRaftVoter('127.0.0.1', leaderPort, { clusterId: cluster.clusterId, voterId: 8, voterHost: '127.0.0.1', voterPort: port });
    for (let attempt = 0; added.errorCode === ErrorCode.REQUEST_TIMED_OUT && attempt < 100; attempt++) {
      await sleep(100);
      added = await addRaftVoter('127.0.0.1', leaderPort, { clusterId: cluster.clusterId, voterId: 8, voterHost: '127.0.0.1', voterPort: port });
    }
    assert.equal(added.errorCode, 0, added.errorMessage ?? '');
    await within(20_000, 'node 8 a voter', (async () => { while (!controller.metadata!.raft.core.isVoter) await sleep(20); })());
    const after = await describeQuorum('127.0.0.1', leaderPort);
    assert.deepEqual(after.voters.map((v) => v.nodeId).sort(), [1, 2, 3, 8]);
  } finally {
    await Promise.allSettled(extra.map((s) => s.close({ controlledShutdown: false })));
    await cluster.close();
  }
});

// A broker that dies in a 3-node cluster: the controller fences it once broker.session.timeout.ms
// passes without a heartbeat (not before), every surviving broker's Metadata then lists neither it
// nor any partition it led (leaders come from the rest of the ISR), and when it is restarted it
// registers again and is listed. Partitions have three replicas in the metadata (the data is not
// replicated yet; the check here is the metadata every broker reports).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster } from '../../src/index.js';
import { ClusterClient, type TopicInfo } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { within } from './process-helpers.js';

const SESSION_TIMEOUT_MS = 3000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function view(port: number): Promise<{ brokers: number[]; topic: TopicInfo | undefined }> {
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${port}` });
  try {
    const c = await client.any();
    const r = await c.send<{ brokers: { nodeId: number }[] }>(ApiKey.Metadata, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    const topics = await client.metadata(['fenced']);
    return { brokers: r.brokers.map((b) => b.nodeId).sort(), topic: topics[0] };
  } finally {
    client.close();
  }
}

test('a dead broker is fenced after the session timeout, its leaderships move to the rest of the ISR on every broker, and it is listed again after a restart', { timeout: 120_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({
    nodes: 3, config: { 'broker.session.timeout.ms': String(SESSION_TIMEOUT_MS), 'broker.heartbeat.interval.ms': '500' },
  }));
  try {
    const ports = cluster.nodes.map((n) => n.brokerPort);
    const admin = new ClusterClient({ bootstrap: `127.0.0.1:${ports[0]}` });
    try {
      for (;;) {
        const r = await admin.admin(ApiKey.CreateTopics, { topics: [{ name: 'fenced', numPartitions: 6, replicationFactor: 3, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false }, 7);
        if (r.topics[0].errorCode !== ErrorCode.NOT_CONTROLLER) { assert.equal(r.topics[0].errorCode, 0, r.topics[0].errorMessage); break; }
        await sleep(50);
      }
    } finally {
      admin.close();
    }
    // The victim: a node that leads some partitions and is not the active controller.
    const leaderId = cluster.leaderId();
    const before = await view(ports[0]!);
    const victim = cluster.nodes.find((n) => n.nodeId !== leaderId && before.topic!.partitions.some((p) => p.leader === n.nodeId))!;
    assert.ok(victim, 'a non-controller node leads a partition');
    const survivors = cluster.nodes.filter((n) => n !== victim).map((n) => n.brokerPort);
    const killedAt = Date.now();
    await victim.kill();

    // Not fenced before its session has run out (it heartbeated up to one interval before the kill).
    // (The check only counts while the earliest possible fencing, kill + timeout - interval, is ahead.)
    const earliestFenceMs = SESSION_TIMEOUT_MS - 600;
    await sleep(SESSION_TIMEOUT_MS / 2);
    for (const port of survivors) {
      const v = await view(port);
      if (Date.now() - killedAt < earliestFenceMs) assert.ok(v.brokers.includes(victim.nodeId), `broker ${victim.nodeId} still listed ${Date.now() - killedAt} ms after the kill`);
    }

    await within(30_000, 'the dead broker fenced and its leaderships moved on every survivor', (async () => {
      for (;;) {
        const views = await Promise.all(survivors.map(view));
        const done = views.every((v) => !v.brokers.includes(victim.nodeId)
          && v.topic!.partitions.every((p) => p.leader !== victim.nodeId && p.leader >= 0 && p.isr.includes(p.leader) && !p.isr.includes(victim.nodeId)));
        if (done) return;
        await sleep(100);
      }
    })());
    const movedMs = Date.now() - killedAt;
    assert.ok(movedMs >= earliestFenceMs, `fenced ${movedMs} ms after the kill, before the ${SESSION_TIMEOUT_MS} ms session could expire`);

    await victim.restart();
    await within(30_000, 'the restarted broker listed again', (async () => {
      for (;;) {
        if ((await Promise.all(ports.map(view))).every((v) => v.brokers.includes(victim.nodeId))) return;
        await sleep(100);
      }
    })());
  } finally {
    await cluster.close();
  }
});

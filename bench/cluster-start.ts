// Start time of a local cluster as a user's test suite feels it: startCluster({ nodes }) until it
// resolves (a leader elected, every node registered and unfenced), then until the first produce
// (acks=all) of one record to a new topic succeeds through the first node. Prints JSON, one object
// per run, with where the time went (from the nodes' own log lines, timestamped here):
// `storageOpenMs` the last node's data directory open, `controllerActiveMs` the first election
// won, `unfencedMs` each node's broker unfenced (its heartbeat answered fenced=false),
// `startClusterMs`, `createTopicMs` the CreateTopics answer, `firstProduceMs`.
// Usage: node dist/bench/cluster-start.js [nodes=3] [runs=5] [key=value ...]  (broker properties
// passed as startCluster's `config`, e.g. broker.heartbeat.interval.ms=2000 to compare)
import { loadavg } from 'node:os';
import { startCluster } from '../src/node/index.js';
import type { Logger } from '../src/util/index.js';
import { ClusterClient } from '../src/client/index.js';
import { ApiKey, isRetriable } from '../src/protocol/index.js';
import { buildRecordBatch } from '../src/records/index.js';

const nodes = Number(process.argv[2] ?? 3);
const runs = Number(process.argv[3] ?? 5);
const config = Object.fromEntries(process.argv.slice(4).map((kv) => {
  const i = kv.indexOf('=');
  if (i < 1) throw new Error(`expected key=value, got ${kv}`);
  return [kv.slice(0, i), kv.slice(i + 1)];
}));

for (let run = 0; run < runs; run++) {
  const lines: { ms: number; text: string }[] = [];
  const t0 = performance.now();
  const note = (text: string): void => { lines.push({ ms: performance.now() - t0, text }); };
  const logger: Logger = { info: note, warn: note, error: note };
  const cluster = await startCluster({ nodes, config, logger });
  const started = performance.now() - t0;
  const client = new ClusterClient({ bootstrap: cluster.bootstrap });
  try {
    const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: 'first', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false }, 7);
    if (created.topics[0].errorCode !== 0) throw new Error(`CreateTopics: ${created.topics[0].errorCode}`);
    const createdMs = performance.now() - t0;
    const records = await buildRecordBatch({ records: [{ value: Buffer.from('hello') }] });
    // As a client does: a retriable error (the leader's own metadata not yet holding the new
    // topic: UNKNOWN_TOPIC_OR_PARTITION) is retried after a metadata refresh.
    const produceErrors: number[] = [];
    for (;;) {
      const conn = await client.leaderFor('first', 0);
      const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: 'first', partitionData: [{ index: 0, records }] }] });
      const code: number = r.responses[0].partitionResponses[0].errorCode;
      if (code === 0) break;
      if (!isRetriable(code) || produceErrors.length >= 50) throw new Error(`Produce: ${code} (after ${produceErrors.join(',')})`);
      produceErrors.push(code);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const produced = performance.now() - t0;
    const first = (re: RegExp): number | null => { const l = lines.find((x) => re.test(x.text)); return l === undefined ? null : Math.round(l.ms); };
    const last = (re: RegExp): number | null => { const l = lines.filter((x) => re.test(x.text)).pop(); return l === undefined ? null : Math.round(l.ms); };
    const unfencedMs = Array.from({ length: nodes }, (_, i) => first(new RegExp(`^node ${i + 1}: broker ${i + 1}: recovery → running`)));
    console.log(JSON.stringify({
      nodes, run, config, storageOpenMs: last(/: storage: /), controllerActiveMs: first(/controller: active in epoch/), elections: lines.filter((x) => /controller: active in epoch/.test(x.text)).length,
      unfencedMs, startClusterMs: Math.round(started), createTopicMs: Math.round(createdMs), firstProduceMs: Math.round(produced), produceErrors, load: loadavg()[0],
    }));
  } finally {
    client.close();
    await cluster.close();
  }
}

// Start time of a local cluster as a user's test suite feels it: startCluster({ nodes }) until it
// resolves (a leader elected, every node caught up), then until the first produce (acks=all) of
// one record to a new topic succeeds through the first node. Prints JSON, one object per run.
// Usage: node dist/bench/cluster-start.js [nodes=3] [runs=5]
import { loadavg } from 'node:os';
import { startCluster } from '../src/broker/index.js';
import { ClusterClient } from '../src/client/index.js';
import { ApiKey } from '../src/protocol/index.js';
import { buildRecordBatch } from '../src/records/index.js';

const nodes = Number(process.argv[2] ?? 3);
const runs = Number(process.argv[3] ?? 5);
for (let run = 0; run < runs; run++) {
  const t0 = performance.now();
  const cluster = await startCluster({ nodes });
  const started = performance.now() - t0;
  const client = new ClusterClient({ bootstrap: cluster.bootstrap });
  try {
    const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: 'first', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false }, 7);
    if (created.topics[0].errorCode !== 0) throw new Error(`CreateTopics: ${created.topics[0].errorCode}`);
    const conn = await client.leaderFor('first', 0);
    const records = await buildRecordBatch({ records: [{ value: Buffer.from('hello') }] });
    const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: 'first', partitionData: [{ index: 0, records }] }] });
    const code = r.responses[0].partitionResponses[0].errorCode;
    if (code !== 0) throw new Error(`Produce: ${code}`);
    const produced = performance.now() - t0;
    console.log(JSON.stringify({ nodes, run, startClusterMs: Math.round(started), firstProduceMs: Math.round(produced), load: loadavg()[0] }));
  } finally {
    client.close();
    await cluster.close();
  }
}

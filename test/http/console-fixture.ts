// A single node with an HTTP listener and data a console user looks at: topic "orders" (3
// partitions, JSON values with keys and a header), topic "audit" with binary values, and consumer
// group "billing" that committed offset 2 of orders-0's 5 records (lag 3), through the Kafka APIs.
import { startServer, type ServerHandle } from '../../src/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatchSync } from '../../src/records/index.js';
import { until, within } from '../broker/process-helpers.js';
export { until } from '../broker/process-helpers.js';

export interface Fixture { node: ServerHandle; http: string; bootstrap: string; client: ClusterClient; close(): Promise<void> }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startConsoleFixture(settings: Record<string, string> = {}): Promise<Fixture> {
  const node = await startServer({
    listeners: ['PLAINTEXT://127.0.0.1:0'],
    config: parseBrokerConfig({ 'node.id': '1', listeners: 'PLAINTEXT://127.0.0.1:0', 'http.listener': '127.0.0.1:0', ...settings }),
  });
  const bootstrap = `127.0.0.1:${node.listeners[0]!.port}`;
  const client = new ClusterClient({ bootstrap });
  try {
    await createTopic(client, 'orders', 3);
    await createTopic(client, 'audit', 1);
    await produce(client, 'orders', 0, [1, 2, 3, 4, 5].map((n) => ({ key: Buffer.from(`order-${n}`), value: Buffer.from(JSON.stringify({ id: n, item: 'book', qty: n })), headers: [{ key: 'source', value: Buffer.from('web') }] })));
    await produce(client, 'orders', 1, [{ key: null, value: Buffer.from('plain text order') }]);
    await produce(client, 'audit', 0, [{ key: null, value: Buffer.from([0x00, 0xff, 0x10, 0x80]) }]);
    await commit(client, 'billing', 'orders', 0, 2n);
  } catch (e) {
    client.close();
    await node.close();
    throw e;
  }
  return {
    node, bootstrap, client, http: `http://127.0.0.1:${node.http!.port}`,
    close: async () => { client.close(); await node.close(); },
  };
}

async function createTopic(client: ClusterClient, name: string, partitions: number): Promise<void> {
  await until(20_000, `create ${name}`, async () => {
    const r = await client.admin(ApiKey.CreateTopics, { topics: [{ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false }, 7);
    const code = r.topics[0].errorCode;
    return code === ErrorCode.NONE || code === ErrorCode.TOPIC_ALREADY_EXISTS ? true : undefined;
  });
  await client.topic(name);
}

async function produce(client: ClusterClient, topic: string, partition: number, records: { key: Buffer | null; value: Buffer; headers?: { key: string; value: Buffer }[] }[]): Promise<void> {
  const conn = await client.leaderFor(topic, partition);
  const batch = buildRecordBatchSync({ records: records.map((r) => ({ ...r, timestamp: Date.now() })) });
  const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: partition, records: batch }] }] });
  const code = r.responses[0].partitionResponses[0].errorCode;
  if (code !== 0) throw new Error(`produce to ${topic}-${partition}: error ${code}`);
}

/** A plain commit (no generation), as `group reset-offsets --execute` makes one; retried while the coordinator loads. */
export async function commit(client: ClusterClient, group: string, topic: string, partition: number, offset: bigint): Promise<void> {
  await until(30_000, `commit for ${group}`, async () => {
    const f = await (await client.any()).send(ApiKey.FindCoordinator, 3, { key: group, keyType: 0, coordinatorKeys: [] });
    if (f.errorCode !== 0) return undefined;
    const coordinator = await client.broker(f.nodeId);
    const r = await coordinator.send(ApiKey.OffsetCommit, 8, {
      groupId: group, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1n,
      topics: [{ name: topic, partitions: [{ partitionIndex: partition, committedOffset: offset, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' }] }],
    });
    return r.topics[0].partitions[0].errorCode === 0 ? true : undefined;
  });
}

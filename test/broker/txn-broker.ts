// A broker with topic `t` (two partitions) and a connection to it, for the transaction wire tests.
import { startServer } from '../../src/node/index.js';
import { BrokerConnection } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';

export async function withTxnBroker(clientId: string, dataDir: string | undefined, fn: (c: BrokerConnection) => Promise<void>): Promise<void> {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir, config: parseBrokerConfig({ 'node.id': '1', 'group.initial.rebalance.delay.ms': '0' }) });
  const c = await BrokerConnection.open({ host: '127.0.0.1', port: server.listeners[0]!.port, clientId, requestTimeoutMs: 10_000 });
  try {
    await c.send(ApiKey.CreateTopics, 7, { topics: [{ name: 't', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false });
    await fn(c);
  } finally {
    c.close();
    await server.close();
  }
}

// flush.messages=1 on a node with a data directory, as an operator sees it (issue 33): every
// acknowledged produce to such a topic was fsynced first (the log flush count in /metrics grows
// with each one; a topic without it flushes nothing), and produces in flight together share the
// log directory's grouped fsync rounds instead of one fsync each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../../src/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatchSync } from '../../src/records/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { tempDataDir, until } from '../broker/process-helpers.js';
import { sample } from '../http/scrape.js';

const SEQUENTIAL = 20;
const CONCURRENT = 40;

test(`flush.messages=1: ${SEQUENTIAL} acks=all produces one after another are each fsynced before they are answered, none for a topic without it, and ${CONCURRENT} in flight at once share fsync rounds`, { timeout: 120_000 }, async () => {
  const server = await startServer({
    listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir(),
    config: parseBrokerConfig({ 'node.id': '1', listeners: 'PLAINTEXT://127.0.0.1:0', 'http.listener': '127.0.0.1:0' }),
  });
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
  const scrape = async (name: string): Promise<number> => sample(await (await fetch(`http://127.0.0.1:${server.http!.port}/metrics`)).text(), name)!;
  const flushes = () => scrape('kafka_log_logflushstats_logflushrateandtimems_count');
  const rounds = () => scrape('logline_log_flush_rounds_total');
  try {
    await until(20_000, 'ready', async () => ((await fetch(`http://127.0.0.1:${server.http!.port}/v1/ready`)).status === 200 ? true : undefined));
    const counted: Record<string, number> = {};
    for (const [name, configs] of [['plain', []], ['fsynced', [{ name: 'flush.messages', value: '1' }]]] as const) {
      const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs }], timeoutMs: 10_000, validateOnly: false }, 7);
      assert.equal(created.topics[0].errorCode, ErrorCode.NONE);
      await client.topic(name);
      const conn = await client.leaderFor(name, 0);
      const produce = (i: number) => conn.send(ApiKey.Produce, 9, {
        transactionalId: null, acks: -1, timeoutMs: 10_000,
        topicData: [{ name, partitionData: [{ index: 0, records: buildRecordBatchSync({ records: [{ key: null, value: Buffer.from(`${name}-${i}`) }] }) }] }],
      });
      // The new partition's first write and the metadata log's own fsyncs settle first.
      assert.equal((await produce(-1)).responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
      const before = await flushes();
      for (let i = 0; i < SEQUENTIAL; i++) assert.equal((await produce(i)).responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
      counted[name] = (await flushes()) - before;
      if (name === 'fsynced') {
        const [start, startRounds] = [await flushes(), await rounds()];
        const answers = await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => produce(SEQUENTIAL + i)));
        for (const a of answers) assert.equal(a.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
        counted.concurrent = (await flushes()) - start;
        counted.concurrentRounds = (await rounds()) - startRounds;
      }
    }
    console.log(`log flushes counted: ${JSON.stringify(counted)}`);
    assert.equal(counted.plain, 0, `no fsync for a topic without flush.messages: ${JSON.stringify(counted)}`);
    // At least one per produce (the metadata log may add its own).
    assert.ok(counted.fsynced! >= SEQUENTIAL, `every acknowledged produce fsynced: ${JSON.stringify(counted)}`);
    assert.ok(counted.concurrent! >= 1 && counted.concurrent! <= CONCURRENT / 2, `${CONCURRENT} produces in flight at once shared fsync rounds: ${JSON.stringify(counted)}`);
    assert.ok(counted.concurrentRounds! >= 1 && counted.concurrentRounds! <= counted.concurrent!, `rounds counted in /metrics: ${JSON.stringify(counted)}`);
  } finally {
    client.close();
    await server.close();
  }
});

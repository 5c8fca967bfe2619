// Produce frames go back to the network layer's pool once their records are in the log. With the
// pool poisoning what it takes back, a frame reused while anything still read it would show up
// here as corrupt or altered records.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startServer } from '../../src/node/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { buildRecordBatch } from '../../src/records/index.js';
import { Prng } from '../../src/util/index.js';
import { consumeAll } from '../broker/log-reader.js';

test('pipelined produce requests of many sizes through a poisoning frame pool: every record reads back intact, in order', async () => {
  process.env['LOGLINE_DEBUG_POISON_FRAMES'] = '1';
  const dataDir = mkdtempSync(join(tmpdir(), 'logline-frame-pool-'));
  const server = await startServer({ dataDir, listeners: ['PLAINTEXT://127.0.0.1:0'] });
  delete process.env['LOGLINE_DEBUG_POISON_FRAMES'];
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
  try {
    const created = await client.admin(ApiKey.CreateTopics, { topics: [
      { name: 'pooled', numPartitions: 3, replicationFactor: 1, assignments: [], configs: [] },
    ], timeoutMs: 1000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, 0);
    const prng = new Prng(7);
    const expected: string[][] = [[], [], []];
    const conn = await client.leaderFor('pooled', 0);
    const inFlight: Promise<void>[] = [];
    for (let i = 0; i < 120; i++) {
      const partition = i % 3;
      // 1 to 150 records of 10 to 6,000 bytes: frames from a few KiB to ~900 KiB, so buffers of
      // every class are taken back and handed out again while other requests are in flight.
      const count = 1 + prng.int(150);
      const size = 10 + prng.int(6000);
      const values = Array.from({ length: count }, (_, k) => `${i}-${k}-${String.fromCharCode(97 + (k % 26)).repeat(size)}`);
      expected[partition]!.push(...values);
      const records = await buildRecordBatch({ records: values.map((v) => ({ key: null, value: Buffer.from(v) })) });
      inFlight.push(conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: i % 2 === 0 ? 1 : -1, timeoutMs: 5000, topicData: [{ name: 'pooled', partitionData: [{ index: partition, records }] }] })
        .then((r) => assert.equal(r.responses[0].partitionResponses[0].errorCode, 0)));
      if (inFlight.length >= 8) await inFlight.shift();
    }
    await Promise.all(inFlight);
    for (let partition = 0; partition < 3; partition++) {
      const got = await consumeAll(client, 'pooled', partition);
      assert.equal(got.length, expected[partition]!.length, `partition ${partition} record count`);
      assert.ok(got.every((v, k) => v === expected[partition]![k]), `partition ${partition} records intact`);
    }
    assert.ok(server.framePool.reused >= 50, `frame buffers reused ${server.framePool.reused} times`);
  } finally {
    client.close();
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

// A broker on a data directory keeps what it acknowledged: topics, configs and records survive a
// clean restart and a SIGKILL of the real server process; deleted topics stay deleted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startServer } from '../../src/node/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { buildRecordBatch } from '../../src/records/index.js';
import { consumeAll } from './log-reader.js';
import { killProcess, startServerProcess } from './process-helpers.js';
import { Prng } from '../../src/util/index.js';

const BIN = 'bin/logline.js';

async function produce(client: ClusterClient, topic: string, partition: number, values: string[], compression = 0): Promise<bigint> {
  const records = await buildRecordBatch({ compression, records: values.map((v) => ({ key: Buffer.from(`k-${v}`), value: Buffer.from(v) })) });
  const conn = await client.leaderFor(topic, partition);
  const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }] });
  const p = r.responses[0].partitionResponses[0];
  assert.equal(p.errorCode, 0, p.errorMessage ?? '');
  return p.baseOffset as bigint;
}

test('topics, configs and records survive a restart on the same data directory; a deleted topic stays deleted', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'logline-durable-'));
  try {
    let server = await startServer({ dataDir, listeners: ['PLAINTEXT://127.0.0.1:0'] });
    let client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
    const created = await client.admin(ApiKey.CreateTopics, { topics: [
      { name: 'keep', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [{ name: 'retention.ms', value: '3600000' }, { name: 'segment.bytes', value: '1048576' }] },
      { name: 'drop', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] },
    ], timeoutMs: 1000, validateOnly: false }, 7);
    assert.deepEqual(created.topics.map((t: { errorCode: number }) => t.errorCode), [0, 0]);
    const before = await client.topic('keep');
    const values = Array.from({ length: 3000 }, (_, i) => `value-${i}-${'x'.repeat(500)}`);
    for (let i = 0; i < values.length; i += 100) await produce(client, 'keep', 0, values.slice(i, i + 100), i % 200 === 0 ? 1 : 0);
    await produce(client, 'keep', 1, ['one']);
    await produce(client, 'drop', 0, ['gone']);
    const deleted = await client.admin(ApiKey.DeleteTopics, { topics: [{ name: 'drop', topicId: (await client.topic('drop')).topicId }], topicNames: [], timeoutMs: 1000 }, 6);
    assert.equal(deleted.responses[0].errorCode, 0);
    client.close();
    await server.close();
    assert.ok(existsSync(join(dataDir, '.kafka_cleanshutdown')));
    assert.ok(readdirSync(join(dataDir, 'keep-0')).filter((f) => f.endsWith('.log')).length > 1, 'segment.bytes=1 MiB rolled the log');
    assert.ok(!readdirSync(dataDir).some((f) => f.startsWith('drop-')), 'the deleted topic has no directory');

    server = await startServer({ dataDir, listeners: ['PLAINTEXT://127.0.0.1:0'] });
    client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
    const after = await client.topic('keep');
    assert.equal(after.topicId, before.topicId, 'same topic id after the restart');
    assert.equal(after.partitions.length, 2);
    assert.equal((await client.metadata(['drop']))[0]!.errorCode, 3, 'UNKNOWN_TOPIC_OR_PARTITION');
    const configs = await client.admin(ApiKey.DescribeConfigs, { resources: [{ resourceType: 2, resourceName: 'keep', configurationKeys: ['retention.ms'] }], includeSynonyms: false, includeDocumentation: false }, 4);
    assert.equal(configs.results[0].configs[0].value, '3600000');
    assert.deepEqual(await consumeAll(client, 'keep', 0), values);
    assert.deepEqual(await consumeAll(client, 'keep', 1), ['one']);
    assert.equal(await produce(client, 'keep', 1, ['two']), 1n, 'appends continue at the log end offset');
    for (const version of [0, 4]) {
      const dirs = await (await client.any()).send(ApiKey.DescribeLogDirs, version, { topics: null });
      assert.equal(dirs.results.length, 1);
      const [dir] = dirs.results;
      assert.equal(dir.errorCode, 0);
      assert.equal(dir.logDir, dataDir);
      assert.deepEqual(dir.topics.map((t: { name: string }) => t.name), ['keep'], 'the metadata log is not a data partition');
      const sizes = dir.topics[0].partitions.map((p: { partitionSize: bigint }) => p.partitionSize);
      assert.ok(sizes[0] > 1_500_000n && sizes[1] > 0n, `sizes ${sizes}`);
      if (version === 4) assert.ok(dir.totalBytes > 0n && dir.usableBytes > 0n && dir.usableBytes <= dir.totalBytes);
    }
    const one = await (await client.any()).send(ApiKey.DescribeLogDirs, 2, { topics: [{ topic: 'keep', partitions: [1] }] });
    assert.deepEqual(one.results[0].topics[0].partitions.map((p: { partitionIndex: number }) => p.partitionIndex), [1]);
    client.close();
    await server.close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/**
 * `acked` is a prefix-ordered subsequence of `found`: nothing acknowledged is missing and the order
 * is kept. A request whose response was lost to the kill may have been written, so `found` may hold
 * records that were never acknowledged, only after the acknowledged ones of their round.
 */
function assertHolds(found: string[], acked: string[], round: number): void {
  let i = 0;
  for (const v of acked) {
    while (i < found.length && found[i] !== v) i++;
    assert.ok(i < found.length, `round ${round}: acknowledged record ${v.slice(0, 24)} is missing`);
    i++;
  }
}


test('SIGKILL of a real server while producers write: every acknowledged record is there after each restart, over 8 kills', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'logline-kill-'));
  const prng = new Prng(42);
  const acked: string[] = [];
  let server: ChildProcess | null = null;
  try {
    for (let round = 0; round < 8; round++) {
      const started = await startServerProcess(dataDir);
      server = started.child;
      const client = new ClusterClient({ bootstrap: `127.0.0.1:${started.port}` });
      if (round === 0) {
        const r = await client.admin(ApiKey.CreateTopics, { topics: [{ name: 'crash', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [{ name: 'segment.bytes', value: '1048576' }] }], timeoutMs: 1000, validateOnly: false }, 7);
        assert.equal(r.topics[0].errorCode, 0);
      }
      const found = await consumeAll(client, 'crash', 0);
      assertHolds(found, acked, round);
      // What a restart found is the new baseline: it must never be lost afterwards either.
      acked.splice(0, acked.length, ...found);
      // Produce in the background and kill the server at a random moment while requests are in flight.
      let stop = false;
      const writer = (async () => {
        for (let i = 0; !stop && i < 500; i++) {
          const batch = Array.from({ length: 20 }, (_, j) => `r${round}-${i}-${j}-${'y'.repeat(200)}`);
          try {
            await produce(client, 'crash', 0, batch);
            acked.push(...batch);
          } catch {
            return; // the connection died with the server: not acknowledged
          }
        }
      })();
      await new Promise((r) => setTimeout(r, 50 + prng.int(400)));
      await killProcess(server);
      stop = true;
      await writer;
      client.close();
    }
    const last = await startServerProcess(dataDir);
    server = last.child;
    const client = new ClusterClient({ bootstrap: `127.0.0.1:${last.port}` });
    assertHolds(await consumeAll(client, 'crash', 0), acked, 8);
    assert.ok(acked.length > 100, `only ${acked.length} records acknowledged`);
    assert.match(readFileSync(join(dataDir, 'meta.properties'), 'utf8'), /cluster\.id=/);
    client.close();
  } finally {
    if (server) await killProcess(server);
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('log.flush.offset.checkpoint.interval.ms sets how often the offset checkpoints are written (high watermarks among them)', { timeout: 60_000 }, async () => {
  const { parseBrokerConfig } = await import('../../src/config/index.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'logline-ckpt-'));
  const server = await startServer({ config: parseBrokerConfig({ 'node.id': '1', 'listeners': 'PLAINTEXT://127.0.0.1:0', 'log.flush.offset.checkpoint.interval.ms': '200' }), dataDir });
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
  try {
    const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: 'ckpt', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, 0);
    const conn = await client.leaderFor('ckpt', 0);
    const records = await buildRecordBatch({ records: [{ value: Buffer.from('a') }, { value: Buffer.from('b') }] });
    const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ name: 'ckpt', partitionData: [{ index: 0, records }] }] });
    assert.equal(r.responses[0].partitionResponses[0].errorCode, 0);
    // The default (60 s) would write it a minute from now; here within a few ticks.
    const file = join(dataDir, 'replication-offset-checkpoint');
    const deadline = Date.now() + 20_000;
    while (!(existsSync(file) && /^ckpt 0 2$/m.test(readFileSync(file, 'utf8')))) {
      assert.ok(Date.now() < deadline, `no high watermark 2 for ckpt-0 in ${file}: ${existsSync(file) ? readFileSync(file, 'utf8') : 'missing'}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  } finally {
    client.close();
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

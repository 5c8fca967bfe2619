// The single node on the cluster's path: its broker registers with the controller in the same
// process, heartbeats, is fenced when it stops (its partitions go leaderless) and unfenced when it
// comes back, takes producer-id blocks from the controller, and stops with a controlled shutdown.
// What is checked is what a user or operator sees: Metadata / DescribeCluster / InitProducerId
// answers, and the records in `__cluster_metadata-0`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '../../src/node/index.js';
import { BrokerConnection } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { iterateBatches, iterateRecords } from '../../src/records/index.js';
import { deserializeMetadataRecord, MetadataRecordType, type MetadataRecord } from '../../src/metadata/index.js';
import { startServerProcess, tempDataDir, within } from '../broker/process-helpers.js';

/** Every metadata record in the log files of `<dataDir>/__cluster_metadata-0`, with its offset (control batches skipped). */
function metadataLog(dataDir: string): { offset: number; record: MetadataRecord }[] {
  const dir = join(dataDir, '__cluster_metadata-0');
  const out: { offset: number; record: MetadataRecord }[] = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.log')).sort()) {
    for (const batch of iterateBatches(readFileSync(join(dir, f)))) {
      if (batch.isControl) continue;
      for (const r of iterateRecords(batch, batch.bytes().subarray(61))) out.push({ offset: Number(r.offset), record: deserializeMetadataRecord(r.value!) });
    }
  }
  return out;
}

const ofBroker = (log: { offset: number; record: MetadataRecord }[], id: number) => log.filter(({ record: r }) =>
  (r.type === MetadataRecordType.RegisterBrokerRecord || r.type === MetadataRecordType.BrokerRegistrationChangeRecord) && r.data.brokerId === id);

async function metadata(conn: BrokerConnection, topics: string[] | null = null) {
  return conn.send(ApiKey.Metadata, 12, { topics: topics?.map((name) => ({ name, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' })) ?? null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
}

/** Polls `check` until it returns true (the fencing timer and heartbeats run on real time). */
async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  await within(timeoutMs, what, (async () => {
    while (!(await check())) await new Promise((r) => setTimeout(r, 20));
  })());
}

test('a started server lists its broker from its registration in Metadata and DescribeCluster; the registration, unfence and controlled shutdown are records in the metadata log', async () => {
  const dataDir = tempDataDir();
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir, config: parseBrokerConfig({ 'node.id': '1', 'broker.rack': 'r1' }) });
  const port = server.listeners[0]!.port;
  const conn = await BrokerConnection.open({ host: '127.0.0.1', port });
  try {
    const md = await metadata(conn);
    assert.deepEqual(md.brokers.map((b: any) => ({ nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack })), [{ nodeId: 1, host: '127.0.0.1', port, rack: 'r1' }]);
    assert.equal(md.controllerId, 1);
    const dc = await conn.send(ApiKey.DescribeCluster, 0, { includeClusterAuthorizedOperations: false });
    assert.deepEqual(dc.brokers.map((b: any) => ({ brokerId: b.brokerId, host: b.host, port: b.port, rack: b.rack })), [{ brokerId: 1, host: '127.0.0.1', port, rack: 'r1' }]);
    assert.equal(dc.controllerId, 1);
  } finally {
    conn.close();
    await server.close();
  }
  const log = ofBroker(metadataLog(dataDir), 1);
  const reg = log.find((e) => e.record.type === MetadataRecordType.RegisterBrokerRecord)!;
  assert.ok(reg, 'a RegisterBrokerRecord for broker 1');
  const regData = reg.record.data as { brokerEpoch: bigint; fenced: boolean; endPoints: { name: string; port: number }[]; rack: string | null };
  assert.equal(regData.brokerEpoch, BigInt(reg.offset), 'the broker epoch is the offset of its registration');
  assert.equal(regData.fenced, true, 'a registration starts fenced');
  assert.deepEqual(regData.endPoints.map((e) => [e.name, e.port]), [['PLAINTEXT', port]]);
  assert.equal(regData.rack, 'r1');
  const changes = log.filter((e) => e.offset > reg.offset).map((e) => e.record.data as { fenced: number; inControlledShutdown: number });
  assert.deepEqual(changes.map((c) => [c.fenced, c.inControlledShutdown]), [[-1, 0], [0, 1], [1, 0]],
    'unfenced once caught up; on close: controlled shutdown, then fenced when let go');
});

test('a broker that stops heartbeating is fenced and leads nothing (leader -1, LEADER_NOT_AVAILABLE); heartbeating again, it is unfenced and leads', async () => {
  const server = await startServer({
    listeners: ['PLAINTEXT://127.0.0.1:0'],
    config: parseBrokerConfig({ 'node.id': '1', 'broker.session.timeout.ms': '600', 'broker.heartbeat.interval.ms': '100' }),
  });
  const conn = await BrokerConnection.open({ host: '127.0.0.1', port: server.listeners[0]!.port });
  try {
    const created = await conn.send(ApiKey.CreateTopics, 7, { topics: [{ name: 'f', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false });
    assert.equal(created.topics[0].errorCode, 0);
    const before = await metadata(conn, ['f']);
    assert.deepEqual(before.topics[0].partitions.map((p: any) => p.leaderId), [1, 1]);
    const epochBefore = before.topics[0].partitions[0].leaderEpoch;
    server.broker!.lifecycle!.pause();
    let fenced: any;
    await eventually('fenced after broker.session.timeout.ms', async () => {
      fenced = await metadata(conn, ['f']);
      return fenced.brokers.length === 0;
    });
    assert.deepEqual(fenced.topics[0].partitions.map((p: any) => [p.errorCode, p.leaderId]), [[ErrorCode.LEADER_NOT_AVAILABLE, -1], [ErrorCode.LEADER_NOT_AVAILABLE, -1]]);
    // KIP-966 (on in a new cluster): the last ISR member leaves the ISR for the ELR, and is the last known leader.
    assert.deepEqual(fenced.topics[0].partitions.map((p: any) => p.isrNodes), [[], []], 'the ISR empties');
    const described = await conn.send(ApiKey.DescribeTopicPartitions, 0, { topics: [{ name: 'f' }], responsePartitionLimit: 10, cursor: null });
    assert.deepEqual(described.topics[0].partitions.map((p: any) => [p.eligibleLeaderReplicas, p.lastKnownElr]), [[[1], [1]], [[1], [1]]]);
    server.broker!.lifecycle!.resume();
    let back: any;
    await eventually('unfenced once heartbeats resume', async () => {
      back = await metadata(conn, ['f']);
      return back.brokers.length === 1 && back.topics[0].partitions.every((p: any) => p.leaderId === 1);
    });
    assert.ok(back.topics[0].partitions[0].leaderEpoch > epochBefore, 'every leader change bumps the leader epoch');
  } finally {
    conn.close();
    await server.close();
  }
});

test('producer ids come from controller blocks and never repeat across restarts', async () => {
  const dataDir = tempDataDir();
  const ids: bigint[] = [];
  for (let run = 0; run < 3; run++) {
    const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir });
    const conn = await BrokerConnection.open({ host: '127.0.0.1', port: server.listeners[0]!.port });
    try {
      for (let i = 0; i < 3; i++) {
        const r = await conn.send(ApiKey.InitProducerId, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
        assert.equal(r.errorCode, 0);
        ids.push(r.producerId);
      }
    } finally {
      conn.close();
      await server.close();
    }
  }
  assert.equal(new Set(ids).size, ids.length, `no id twice: ${ids.join(',')}`);
  const blocks = metadataLog(dataDir).filter((e) => e.record.type === MetadataRecordType.ProducerIdsRecord).map((e) => e.record.data as { brokerId: number; brokerEpoch: bigint });
  assert.equal(blocks.length, 3, 'one block per run');
  assert.ok(blocks.every((b) => b.brokerId === 1 && b.brokerEpoch > 0n), 'taken with the broker\'s registered epoch');
  assert.equal(new Set(blocks.map((b) => b.brokerEpoch)).size, 3, 'each run registered anew');
});

test('a SIGTERM\'d server process performs a controlled shutdown before it exits', async () => {
  const dataDir = tempDataDir();
  const { child, port } = await startServerProcess(dataDir);
  // One request answered: the process is past its start and has its signal handlers.
  const conn = await BrokerConnection.open({ host: '127.0.0.1', port });
  assert.equal((await metadata(conn)).brokers.length, 1);
  conn.close();
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  assert.equal(await within(30_000, 'exit after SIGTERM', exited), 0, out);
  assert.match(out, /pending-controlled-shutdown → shutting-down \(heartbeat wantShutDown=true, fenced=\w+, shouldShutDown=true\)/);
  const changes = ofBroker(metadataLog(dataDir), 1).filter((e) => e.record.type === MetadataRecordType.BrokerRegistrationChangeRecord)
    .map((e) => e.record.data as { fenced: number; inControlledShutdown: number });
  assert.deepEqual(changes.slice(-2).map((c) => [c.fenced, c.inControlledShutdown]), [[0, 1], [1, 0]], 'in controlled shutdown, then let go (fenced)');
});

test('Metadata and DescribeCluster list each broker on the listener the request came in on', async () => {
  // INTERNAL is mapped to a protocol as Kafka requires (listener.security.protocol.map).
  const config = parseBrokerConfig({ 'node.id': '1', 'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT' });
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0', 'INTERNAL://127.0.0.1:0'], config });
  const ports = Object.fromEntries(server.listeners.map((l) => [l.name, l.port]));
  try {
    for (const name of ['PLAINTEXT', 'INTERNAL']) {
      const conn = await BrokerConnection.open({ host: '127.0.0.1', port: ports[name]! });
      try {
        const md = await metadata(conn);
        assert.deepEqual(md.brokers.map((b: any) => [b.nodeId, b.port]), [[1, ports[name]]], name);
        const dc = await conn.send(ApiKey.DescribeCluster, 1, { includeClusterAuthorizedOperations: false, endpointType: 1 });
        assert.deepEqual(dc.brokers.map((b: any) => [b.brokerId, b.port]), [[1, ports[name]]], name);
      } finally {
        conn.close();
      }
    }
  } finally {
    await server.close();
  }
});

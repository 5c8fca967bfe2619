// A tiering broker as its own `logline server` process, for the failure tests that SIGKILL it or
// its object store: started on a fixed loopback port (a restart keeps its address), its /metrics
// port read from its log, and what a user checks from outside: ListOffsets EARLIEST_LOCAL (-4) and
// LATEST_TIERED (-5), the /metrics series, the `__remote_log_metadata` history as Kafka's records,
// and every record of a topic read back by kafkajs.
import { spawn, type ChildProcess } from 'node:child_process';
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { decompressBatchBody, iterateBatches, iterateRecords } from '../../src/records/index.js';
import { decodeRemoteLogMetadata, REMOTE_LOG_METADATA_TOPIC, type RemoteLogMetadataEvent } from '../../src/tiered/index.js';
import { ACCESS_KEY, SECRET, BUCKET } from './s3-helpers.js';

export interface BrokerProcess { child: ChildProcess; port: number; httpPort: number; log: string }

/** The broker settings for the S3 backend against s3rver on `s3Port`. */
export function s3Settings(s3Port: number): Record<string, string> {
  return {
    'remote.log.storage.manager.class.name': 'io.aiven.kafka.tieredstorage.RemoteStorageManager',
    'rsm.config.storage.backend.class': 'io.aiven.kafka.tieredstorage.storage.s3.S3Storage',
    'rsm.config.storage.s3.bucket.name': BUCKET, 'rsm.config.storage.s3.endpoint.url': `http://127.0.0.1:${s3Port}`,
    'rsm.config.storage.s3.path.style.access.enabled': 'true', 'rsm.config.storage.aws.access.key.id': ACCESS_KEY,
    'rsm.config.storage.aws.secret.access.key': SECRET,
  };
}

/** `logline server` with tiering on, `settings` added; resolves once it listens on `port`. */
export function startTieredBroker(dataDir: string, port: number, settings: Record<string, string>): Promise<BrokerProcess> {
  const all: Record<string, string> = {
    'remote.log.storage.system.enable': 'true', 'http.listener': '127.0.0.1:0', 'schema.registry.listener': '127.0.0.1:0',
    'rlmm.config.remote.log.metadata.topic.num.partitions': '1', ...settings,
  };
  const args = ['bin/logline.js', 'server', '--data-dir', dataDir, '--listeners', `PLAINTEXT://127.0.0.1:${port}`, ...Object.entries(all).flatMap(([k, v]) => ['--set', `${k}=${v}`])];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const b: BrokerProcess = { child, port, httpPort: 0, log: '' };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`broker did not start: ${b.log}`)); }, 45_000);
    const onData = (d: Buffer) => {
      b.log += d;
      const http = /http listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(b.log);
      if (http !== null) b.httpPort = Number(http[1]);
      if (b.log.includes(`listening on PLAINTEXT://127.0.0.1:${port}`) && b.httpPort !== 0) { clearTimeout(timer); resolve(b); }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code, signal) => { clearTimeout(timer); reject(new Error(`broker exited (${code ?? signal}) before it was ready: ${b.log}`)); });
  });
}

/** One /metrics value (NaN when the series is absent). */
export async function metric(b: BrokerProcess, series: string, topic: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${b.httpPort}/metrics`)).text();
  const m = new RegExp(`^kafka_server_brokertopicmetrics_${series}\\{topic="${topic}"\\} (\\S+)$`, 'm').exec(text);
  return Number(m?.[1] ?? NaN);
}

/** ListOffsets of partition 0 at `timestamp` (-1 latest, -2 earliest, -4 earliest local, -5 latest tiered). */
export async function listOffset(client: ClusterClient, topic: string, timestamp: bigint): Promise<number> {
  const conn = await client.leaderFor(topic, 0);
  const r = await conn.send(ApiKey.ListOffsets, 9, { replicaId: -1, isolationLevel: 0, topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp }] }] });
  const p = r.topics[0].partitions[0];
  if (p.errorCode !== 0) throw new Error(`ListOffsets ${timestamp} of ${topic}: error ${p.errorCode}`);
  return Number(p.offset);
}

/** One Fetch of partition 0 from `offset` as a consumer: its error code and the offsets of the records it returned. */
export async function fetchOnce(client: ClusterClient, topic: string, offset: number): Promise<{ errorCode: number; offsets: number[] }> {
  const conn = await client.leaderFor(topic, 0);
  const r = await conn.send(ApiKey.Fetch, 12, {
    replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1024 * 1024, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: BigInt(offset), lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 256 * 1024 }] }],
    forgottenTopicsData: [], rackId: '',
  });
  const p = r.responses[0].partitions[0];
  const offsets: number[] = [];
  for (const batch of iterateBatches(p.records ?? Buffer.alloc(0))) {
    for (const rec of iterateRecords(batch, await decompressBatchBody(batch))) offsets.push(Number(rec.offset));
  }
  return { errorCode: p.errorCode, offsets };
}

/** Every event in `__remote_log_metadata` partition 0 (the brokers here run it with one partition), in order. */
export async function remoteLogMetadataHistory(client: ClusterClient): Promise<RemoteLogMetadataEvent[]> {
  const conn = await client.leaderFor(REMOTE_LOG_METADATA_TOPIC, 0);
  const out: RemoteLogMetadataEvent[] = [];
  let offset = 0n;
  for (let round = 0; round < 1000; round++) {
    const r = await conn.send(ApiKey.Fetch, 12, {
      replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 4 * 1024 * 1024, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: REMOTE_LOG_METADATA_TOPIC, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: offset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1024 * 1024 }] }],
      forgottenTopicsData: [], rackId: '',
    });
    const p = r.responses[0].partitions[0];
    assert.equal(p.errorCode, 0, `fetch ${REMOTE_LOG_METADATA_TOPIC}`);
    if (!p.records || p.records.length === 0) return out;
    for (const batch of iterateBatches(p.records)) {
      for (const rec of iterateRecords(batch, await decompressBatchBody(batch))) {
        if (BigInt(rec.offset) < offset) continue;
        out.push(decodeRemoteLogMetadata(rec.value!));
        offset = BigInt(rec.offset) + 1n;
      }
    }
  }
  throw new Error(`${REMOTE_LOG_METADATA_TOPIC} did not end`);
}

/** Each segment copy the history names: its range, the states it went through, in order. */
export function segmentHistories(events: RemoteLogMetadataEvent[], topic: string): Map<string, { startOffset: number; endOffset: number; states: number[] }> {
  const out = new Map<string, { startOffset: number; endOffset: number; states: number[] }>();
  for (const e of events) {
    if (e.kind === 'segment' && e.metadata.remoteLogSegmentId.topicIdPartition.topic === topic) {
      out.set(e.metadata.remoteLogSegmentId.id, { startOffset: e.metadata.startOffset, endOffset: e.metadata.endOffset, states: [e.metadata.state] });
    } else if (e.kind === 'segment-update' && e.update.remoteLogSegmentId.topicIdPartition.topic === topic) {
      out.get(e.update.remoteLogSegmentId.id)?.states.push(e.update.state);
    }
  }
  return out;
}

/** kafkajs reads `count` records of partition 0 from offset 0 (a fresh group); offsets and values as read. */
export async function readAllWithKafkajs(bootstrap: string, topic: string, count: number, groupId: string, timeoutMs = 90_000): Promise<{ offsets: number[]; values: string[] }> {
  const kafka = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId, maxBytesPerPartition: 512 * 1024 });
  await consumer.connect();
  const offsets: number[] = [];
  const values: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    const done = new Promise<void>((resolve) => {
      void consumer.run({ eachMessage: async ({ message }) => { offsets.push(Number(message.offset)); values.push(message.value!.toString()); if (offsets.length >= count) resolve(); } });
    });
    await Promise.race([done, new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`kafkajs read ${offsets.length} of ${count} records`)), timeoutMs); })]);
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
  }
  return { offsets, values };
}

/** SIGKILLs a broker this test started and waits for it to be gone. */
export function killBroker(b: BrokerProcess | null): Promise<void> {
  return new Promise((resolve) => {
    if (b === null || b.child.exitCode !== null || b.child.signalCode !== null) { resolve(); return; }
    b.child.removeAllListeners('exit');
    b.child.once('exit', () => resolve());
    b.child.kill('SIGKILL');
  });
}

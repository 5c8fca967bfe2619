// The S3 server stopped for a while under load (issue 31): a `logline server` process tiers a topic
// to s3rver (its own process) while a kafkajs producer (acks=all) keeps writing; s3rver is SIGKILLed
// for several task intervals and started again on the same port over the same directory. Produce
// keeps succeeding throughout; local retention never deletes a segment before it is copied (checked
// all along from outside: EARLIEST_LOCAL never passes LATEST_TIERED + 1, and the segments pile up on
// disk instead); local reads go on and a read from the tier gets a retriable error; /metrics shows
// the copy errors and the copy lag growing, and `logline doctor` warns of it; copying resumes after
// the restart, the failed attempts are deleted; then kafkajs reads every offset from 0 exactly once
// with its value intact.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { freePort } from '../../src/util/index.js';
import { runProcess, tempDataDir, until } from '../broker/process-helpers.js';
import { ACCESS_KEY, SECRET, BUCKET, startS3Server, stopS3Server, killS3Server, type RunningServer } from './s3-helpers.js';
import { RemoteLogSegmentState as S, S3ObjectStore, S3_PART_BYTES_MIN } from '../../src/tiered/index.js';
import {
  startTieredBroker, killBroker, s3Settings, metric, listOffset, fetchOnce, readAllWithKafkajs, remoteLogMetadataHistory, segmentHistories, type BrokerProcess,
} from './tier-process.js';

const TOPIC = 'outage';
const VALUE_BYTES = 1000;
/** Records before, during and after the outage (1 MiB segments hold ~1000). */
const BEFORE = Number(process.env.TIER_OUTAGE_BEFORE ?? 2500);
const DURING = Number(process.env.TIER_OUTAGE_DURING ?? 4000);
const AFTER = Number(process.env.TIER_OUTAGE_AFTER ?? 1500);
const value = (i: number) => `r${i}-`.padEnd(VALUE_BYTES, 'o');

describe('tiering to S3 while the S3 server is down for a while, under load', { timeout: 240_000 }, () => {
  let s3: RunningServer | null = null;
  let broker: BrokerProcess | null = null;
  let client: ClusterClient;
  let producer: Producer;
  let dataDir: string;
  let bootstrap: string;
  let produced = 0;
  /** Checks of the invariant from outside, every 100 ms while records are produced. */
  let watching = true;
  let watcher: Promise<void> = Promise.resolve();
  const violations: string[] = [];
  let checks = 0;

  const produce = async (count: number) => {
    for (const end = produced + count; produced < end;) {
      const n = Math.min(50, end - produced);
      // Every send must succeed (kafkajs retries a retriable error itself); a failure fails the test.
      await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: n }, (_, j) => ({ key: `k${produced + j}`, value: value(produced + j) })) });
      produced += n;
    }
  };
  const localSegmentFiles = () => readdirSync(join(dataDir, `${TOPIC}-0`)).filter((f) => f.endsWith('.log')).length;

  before(async () => {
    s3 = await startS3Server();
    dataDir = tempDataDir();
    const port = await freePort();
    broker = await startTieredBroker(dataDir, port, {
      ...s3Settings(s3.port), 'remote.log.manager.task.interval.ms': '200', 'log.retention.check.interval.ms': '200',
    });
    bootstrap = `127.0.0.1:${port}`;
    client = new ClusterClient({ bootstrap });
    const configs = [['remote.storage.enable', 'true'], ['segment.bytes', String(1024 * 1024)], ['local.retention.bytes', '0']].map(([name, v]) => ({ name, value: v }));
    const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: TOPIC, numPartitions: 1, replicationFactor: 1, assignments: [], configs }], timeoutMs: 10_000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, 0, created.topics[0].errorMessage);
    producer = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING }).producer({ idempotent: true });
    await producer.connect();
    // EARLIEST_LOCAL first, then LATEST_TIERED: the tiered offset only grows, so local <= tiered + 1 must hold across the two reads.
    watcher = (async () => {
      while (watching) {
        try {
          const local = await listOffset(client, TOPIC, -4n);
          const tiered = await listOffset(client, TOPIC, -5n);
          checks++;
          if (local > tiered + 1) violations.push(`local log start ${local} passed the highest copied offset ${tiered} + 1`);
        } catch {
          // The broker is busy or restarting its connection: the next round checks again.
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
  });

  after(async () => {
    watching = false;
    await watcher;
    await producer?.disconnect().catch(() => undefined);
    client?.close();
    await killBroker(broker);
    if (s3 !== null) await stopS3Server(s3);
  }, { timeout: 30_000 });

  it('produce keeps going, nothing uncopied is deleted locally, copying resumes, nothing is lost', async (t) => {
    // Before: segments are copied and deleted locally.
    await produce(BEFORE);
    await until(60_000, 'the first segments copied and deleted locally', async () => {
      const local = await listOffset(client, TOPIC, -4n);
      const tiered = await listOffset(client, TOPIC, -5n);
      return tiered >= 0 && local === tiered + 1 && (await metric(broker!, 'remotecopylagsegments', TOPIC)) === 0 ? true : undefined;
    }, 100);
    const errorsBefore = await metric(broker!, 'remotecopyerrors_total', TOPIC);
    assert.equal(errorsBefore, 0, 'no copy error while the store is up');

    // The store goes down while the producer is writing.
    const during = produce(DURING);
    await until(30_000, 'the producer under way', async () => (produced >= BEFORE + 200 ? true : undefined), 10);
    await killS3Server(s3!);
    const tieredAtOutage = await listOffset(client, TOPIC, -5n);
    const filesAtOutage = localSegmentFiles();
    // What an operator runs: `logline doctor` samples the copy lag twice, 4 s apart, while records keep coming.
    let doctorDone = false;
    const doctor = runProcess(process.execPath, ['bin/logline.js', 'doctor', '-b', bootstrap, '--http', `127.0.0.1:${broker!.httpPort}`, '--json', '--lag-interval-ms', '4000'], null, 120_000)
      .finally(() => { doctorDone = true; });
    await during;
    assert.equal(produced, BEFORE + DURING, 'every send during the outage succeeded');
    // Paced (~1 MB/s when idle), so segments roll between the doctor's two samples, whenever it takes them.
    for (let extra = 0; !doctorDone && extra < 16_000; extra += 100) {
      await produce(100);
      await new Promise((r) => setTimeout(r, 50));
    }
    const doctorOut = await doctor;
    const copyLagCheck = (JSON.parse(doctorOut.stdout) as { checks: { status: string; check: string; detail: string }[] }).checks.find((c) => c.check === 'tiered storage copy lag');
    t.diagnostic(`doctor: ${copyLagCheck?.status} ${copyLagCheck?.detail}`);
    assert.equal(copyLagCheck?.status, 'WARN', `logline doctor warns of the growing copy lag: ${doctorOut.stdout}${doctorOut.stderr}`);
    assert.deepEqual(violations, [], 'while the store is down, local retention deletes nothing uncopied');
    // Several task intervals of failed copies, retried.
    await until(60_000, 'copies failing and retried', async () => ((await metric(broker!, 'remotecopyerrors_total', TOPIC)) >= 10 ? true : undefined), 100);
    const lagSegments = await metric(broker!, 'remotecopylagsegments', TOPIC);
    const lagBytes = await metric(broker!, 'remotecopylagbytes', TOPIC);
    const tieredDuring = await listOffset(client, TOPIC, -5n);
    const localDuring = await listOffset(client, TOPIC, -4n);
    // A copy whose objects were all written just before the kill may still finish: at most one segment more.
    assert.ok(tieredDuring <= tieredAtOutage + 1100, `nothing copied while the store is down (${tieredAtOutage} -> ${tieredDuring})`);
    assert.ok(localDuring <= tieredDuring + 1, `local log start ${localDuring} <= highest copied ${tieredDuring} + 1`);
    assert.ok(lagSegments >= 3, `copy lag ${lagSegments} segments during the outage`);
    assert.ok(lagBytes >= 3 * 1024 * 1024 * 0.9, `copy lag ${lagBytes} bytes during the outage`);
    assert.ok(localSegmentFiles() >= filesAtOutage + 3, `local segments pile up (${filesAtOutage} -> ${localSegmentFiles()}) instead of being deleted uncopied`);
    t.diagnostic(`outage: copy errors ${await metric(broker!, 'remotecopyerrors_total', TOPIC)}, lag ${lagSegments} segments / ${lagBytes} bytes, local segment files ${filesAtOutage} -> ${localSegmentFiles()}, highest copied ${tieredAtOutage} -> ${tieredDuring}, local start ${localDuring}`);
    // Local reads go on; a read from the tier gets a retriable error or nothing yet (or what the read cache holds), never other records.
    const localRead = await fetchOnce(client, TOPIC, localDuring);
    assert.equal(localRead.errorCode, 0, 'a fetch of the local log while the store is down');
    assert.equal(localRead.offsets.filter((o) => o >= localDuring)[0], localDuring, 'the local log reads from its start');
    const remoteRead = await fetchOnce(client, TOPIC, 0);
    t.diagnostic(`a fetch from offset 0 (in the tier) while the store is down: error ${remoteRead.errorCode}, ${remoteRead.offsets.length} records`);
    assert.ok(remoteRead.errorCode === 0 || remoteRead.errorCode === 56, `KAFKA_STORAGE_ERROR (retriable) or an empty answer, got ${remoteRead.errorCode}`);
    assert.ok(remoteRead.offsets.length === 0 || (remoteRead.errorCode === 0 && remoteRead.offsets[0] === 0), `records from the tier: ${remoteRead.offsets.slice(0, 3).join(', ')}`);
    const earliest = await listOffset(client, TOPIC, -2n);
    assert.equal(earliest, 0, 'the log start offset stays 0');

    // The store comes back on its port, over its data; the producer goes on.
    s3 = await startS3Server({ dir: s3!.dir, port: s3!.port });
    await produce(AFTER);
    await until(90_000, 'copying caught up after the outage', async () => {
      const local = await listOffset(client, TOPIC, -4n);
      const tiered = await listOffset(client, TOPIC, -5n);
      return local === tiered + 1 && tiered > produced - AFTER - 1100 && (await metric(broker!, 'remotecopylagsegments', TOPIC)) === 0 ? true : undefined;
    }, 200);
    assert.ok(localSegmentFiles() <= 2, `local retention deleted the copied segments (${localSegmentFiles()} left)`);
    // The attempts cut short by the outage are orphans, deleted once the store answers; one finished copy per range, from 0.
    const histories = await until(60_000, 'the failed attempts deleted', async () => {
      const h = segmentHistories(await remoteLogMetadataHistory(client), TOPIC);
      return [...h.values()].every((x) => x.states.at(-1) === S.COPY_SEGMENT_FINISHED || x.states.at(-1) === S.DELETE_SEGMENT_FINISHED) ? h : undefined;
    }, 200);
    const finished = [...histories.values()].filter((h) => h.states.at(-1) === S.COPY_SEGMENT_FINISHED).sort((a, b) => a.startOffset - b.startOffset);
    assert.equal(finished[0]!.startOffset, 0);
    for (let i = 1; i < finished.length; i++) assert.equal(finished[i]!.startOffset, finished[i - 1]!.endOffset + 1, 'finished copies neither overlap nor leave a gap');
    t.diagnostic(`copies: ${finished.length} finished, ${histories.size - finished.length} failed attempts deleted`);
    // The bucket holds the finished copies' objects, none of a failed attempt.
    const finishedIds = new Set([...histories].filter(([, h]) => h.states.at(-1) === S.COPY_SEGMENT_FINISHED).map(([id]) => id));
    const store = new S3ObjectStore({ bucket: BUCKET, region: 'us-east-1', endpoint: `http://127.0.0.1:${s3!.port}`, pathStyle: true, partBytes: S3_PART_BYTES_MIN, multipartThresholdBytes: S3_PART_BYTES_MIN, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET } });
    try {
      const keys = await store.list('');
      const ids = keys.map((k) => /-([A-Za-z0-9_-]{22})\.[a-z-]+$/.exec(k)?.[1]);
      assert.deepEqual(keys.filter((_k, i) => ids[i] === undefined || !finishedIds.has(ids[i]!)), [], 'no object of a failed attempt is left');
      assert.equal(keys.filter((k) => k.endsWith('.log')).length, finishedIds.size, 'one log object per finished copy');
    } finally {
      await store.close();
    }
    assert.ok((await metric(broker!, 'remotecopyrequests_total', TOPIC)) >= (produced - AFTER) / 1100, 'segments copied after the outage');
    watching = false;
    await watcher;
    t.diagnostic(`after: highest copied ${await listOffset(client, TOPIC, -5n)}, ${checks} invariant checks`);
    assert.ok(checks > 10, `the invariant was checked (${checks} times)`);
    assert.deepEqual(violations, [], 'local retention never deleted a segment before it was copied');

    const { offsets, values } = await readAllWithKafkajs(bootstrap, TOPIC, produced, 'outage-reader');
    assert.equal(offsets.length, produced);
    for (let i = 0; i < produced; i++) {
      if (offsets[i] !== i || values[i] !== value(i)) assert.fail(`record ${i}: offset ${offsets[i]}, value ${values[i]?.slice(0, 20)}`);
    }
  });
});

// The store frozen (SIGSTOP) rather than gone: connections are accepted and never answered. With
// storage.s3.api.call.attempt.timeout the copy fails and is retried, produce goes on, local
// retention waits; without it a SIGTERM still stops the broker at once (its calls in flight are
// aborted); copying resumes once the store answers again and every offset reads back once.
describe('tiering to S3 while the S3 server is frozen (SIGSTOP), under load', { timeout: 240_000 }, () => {
  const FROZEN = 'frozen';
  let s3: RunningServer | null = null;
  let broker: BrokerProcess | null = null;
  let client: ClusterClient | null = null;
  let dataDir: string;
  let port: number;
  let produced = 0;

  const produce = async (count: number) => {
    const producer = new Kafka({ brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING }).producer({ idempotent: true });
    await producer.connect();
    try {
      for (const end = produced + count; produced < end;) {
        const n = Math.min(50, end - produced);
        await producer.send({ topic: FROZEN, acks: -1, messages: Array.from({ length: n }, (_, j) => ({ key: `k${produced + j}`, value: value(produced + j) })) });
        produced += n;
      }
    } finally {
      await producer.disconnect();
    }
  };
  const start = async (settings: Record<string, string> = {}) => {
    broker = await startTieredBroker(dataDir, port, { ...s3Settings(s3!.port), 'remote.log.manager.task.interval.ms': '200', 'log.retention.check.interval.ms': '200', ...settings });
    client = new ClusterClient({ bootstrap: `127.0.0.1:${port}` });
  };
  const caughtUp = async (what: string) => until(90_000, what, async () => {
    const local = await listOffset(client!, FROZEN, -4n);
    const tiered = await listOffset(client!, FROZEN, -5n);
    return local === tiered + 1 && tiered > produced - 1100 && (await metric(broker!, 'remotecopylagsegments', FROZEN)) === 0 ? tiered : undefined;
  }, 200);

  before(async () => {
    s3 = await startS3Server();
    dataDir = tempDataDir();
    port = await freePort();
    await start({ 'rsm.config.storage.s3.api.call.attempt.timeout': '1500' });
    const configs = [['remote.storage.enable', 'true'], ['segment.bytes', String(1024 * 1024)], ['local.retention.bytes', '0']].map(([name, v]) => ({ name, value: v }));
    const created = await client!.admin(ApiKey.CreateTopics, { topics: [{ name: FROZEN, numPartitions: 1, replicationFactor: 1, assignments: [], configs }], timeoutMs: 10_000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, 0, created.topics[0].errorMessage);
  });

  after(async () => {
    client?.close();
    await killBroker(broker);
    if (s3 !== null) await stopS3Server(s3);
  }, { timeout: 30_000 });

  it('copies time out and are retried while produce goes on; SIGTERM stops the broker at once; copying resumes; nothing is lost', async (t) => {
    await produce(1500);
    await caughtUp('the first segment copied');
    const errorsBefore = await metric(broker!, 'remotecopyerrors_total', FROZEN);

    s3!.child.kill('SIGSTOP');
    await produce(3000);
    await until(60_000, 'copies to the frozen store timing out and retried', async () => ((await metric(broker!, 'remotecopyerrors_total', FROZEN)) >= errorsBefore + 2 ? true : undefined), 200);
    const local = await listOffset(client!, FROZEN, -4n);
    const tiered = await listOffset(client!, FROZEN, -5n);
    const lag = await metric(broker!, 'remotecopylagsegments', FROZEN);
    t.diagnostic(`frozen: highest copied ${tiered}, local start ${local}, lag ${lag} segments, copy errors ${await metric(broker!, 'remotecopyerrors_total', FROZEN) - errorsBefore}`);
    assert.ok(local <= tiered + 1, `local log start ${local} <= highest copied ${tiered} + 1`);
    assert.ok(lag >= 2, `copy lag ${lag} segments while the store is frozen`);
    s3!.child.kill('SIGCONT');
    await caughtUp('copying resumed after the store answered again');

    // No attempt timeout now: a copy hangs on the frozen store until the socket timeout (30 s).
    const stopped = new Promise((r) => broker!.child.once('exit', r));
    broker!.child.kill('SIGTERM');
    await stopped;
    client!.close();
    await start();
    s3!.child.kill('SIGSTOP');
    await produce(1500);
    await until(30_000, 'a copy waiting on the frozen store', async () => ((await metric(broker!, 'remotecopylagsegments', FROZEN)) >= 1 ? true : undefined), 100);
    await new Promise((r) => setTimeout(r, 1000));
    const began = Date.now();
    const exited = new Promise<number | null>((r) => broker!.child.once('exit', (code) => r(code)));
    broker!.child.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('still running'), 25_000))]);
    t.diagnostic(`SIGTERM with a copy hanging on the frozen store: ${code} after ${Date.now() - began} ms`);
    assert.equal(code, 0, 'the broker stops on SIGTERM while a copy waits on the frozen store');
    client!.close();
    s3!.child.kill('SIGCONT');
    await start();
    await caughtUp('copying resumed after the restart');

    const { offsets, values } = await readAllWithKafkajs(`127.0.0.1:${port}`, FROZEN, produced, 'frozen-reader');
    assert.equal(offsets.length, produced);
    for (let i = 0; i < produced; i++) {
      if (offsets[i] !== i || values[i] !== value(i)) assert.fail(`record ${i}: offset ${offsets[i]}, value ${values[i]?.slice(0, 20)}`);
    }
  });
});

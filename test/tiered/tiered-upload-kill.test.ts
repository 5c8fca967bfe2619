// SIGKILL of a tiering broker during an upload, then a restart (issue 31), on S3 (s3rver as its own
// process, the segment going up as a multipart upload) and on the local directory backend. The
// broker (`logline server`, its own process) is frozen the moment the segment's log object is half
// written (S3: a part stored, the upload not completed; local: the temporary file there), checked to
// be mid-upload (the indexes written, the log object not) and COPY_SEGMENT_STARTED without FINISHED
// in `__remote_log_metadata`, and SIGKILLed. Restarted, it copies the segment again and deletes the
// orphaned copy (DELETE_SEGMENT_STARTED/FINISHED, its objects gone); the metadata ends with exactly
// one finished copy per offset range; kafkajs reads every offset from 0 once, intact.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { RemoteLogSegmentState as S } from '../../src/tiered/index.js';
import { freePort } from '../../src/util/index.js';
import { tempDataDir, until } from '../broker/process-helpers.js';
import { BUCKET, startS3Server, stopS3Server, s3UploadsDir, type RunningServer } from './s3-helpers.js';
import {
  startTieredBroker, killBroker, s3Settings, listOffset, readAllWithKafkajs, remoteLogMetadataHistory, segmentHistories, type BrokerProcess,
} from './tier-process.js';

const TOPIC = 'upload-kill';
const VALUE_BYTES = 1000;
const SEGMENT_BYTES = 12 * 1024 * 1024;
/** A rolled 12 MiB segment (three 5 MiB parts on S3) and some of the next. */
const RECORDS = Number(process.env.TIER_UPLOAD_KILL_RECORDS ?? 13_500);
const value = (i: number) => `u${i}-`.padEnd(VALUE_BYTES, 'k');
/** `<20-digit start offset>-<segment uuid>.<suffix>`, Kafka's LocalTieredStorage names. */
const OBJECT = /^(\d{20})-([A-Za-z0-9_-]{22})(\.[a-z-]+)$/;

/** Every file under `dir` (relative paths), recursively. */
function walk(dir: string, under = dir): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p, { throwIfNoEntry: false })?.isDirectory() === true ? walk(p, under) : [relative(under, p)];
  });
}

function uploadKillSuite(backend: 's3' | 'local'): void {
  describe(`SIGKILL of the broker during an upload (${backend === 's3' ? 'S3 multipart' : 'local directory'}), then a restart`, { timeout: 240_000 }, () => {
    let s3: RunningServer | null = null;
    let remoteDir = '';
    let broker: BrokerProcess | null = null;
    let client: ClusterClient | null = null;
    let dataDir: string;
    let port: number;
    let settings: Record<string, string>;

    /** The segment objects in the store: key base name (`<start>-<uuid>.<suffix>`), whole objects only. */
    const objects = (): string[] => {
      if (backend === 'local') return walk(remoteDir).map((f) => f.split('/').pop()!).filter((f) => OBJECT.test(f));
      return walk(join(s3!.dir, BUCKET)).filter((f) => !f.startsWith('._S3rver_uploads') && f.endsWith('._S3rver_object'))
        .map((f) => f.split('/').pop()!.slice(0, -'._S3rver_object'.length)).filter((f) => OBJECT.test(f));
    };
    /** A log object half written: S3, a part of a multipart upload stored; local, the temporary file of a `.log`. */
    const halfWritten = (): boolean => (backend === 's3'
      ? walk(s3UploadsDir(s3!)).some((f) => f.endsWith('/1.md5'))
      : walk(remoteDir).some((f) => /\.log\.tmp-/.test(f)));

    before(async () => {
      if (backend === 's3') {
        s3 = await startS3Server();
        settings = { ...s3Settings(s3.port), 'rsm.config.storage.s3.multipart.upload.part.size': String(5 * 1024 * 1024) };
      } else {
        remoteDir = mkdtempSync(join(tmpdir(), 'logline-tier-kill-'));
        // Copied, not linked: a link appears whole at once, and this test needs a log object caught
        // half written (what a crash mid-copy leaves; a crash around a link leaves at most an orphan,
        // which the same cleanup deletes).
        settings = { 'remote.log.storage.manager.class.name': 'org.apache.kafka.server.log.remote.storage.LocalTieredStorage', 'rsm.config.dir': remoteDir, 'rsm.config.link.segments': 'false' };
      }
      Object.assign(settings, { 'remote.log.manager.task.interval.ms': '200', 'log.retention.check.interval.ms': '200' });
      dataDir = tempDataDir();
      port = await freePort();
      broker = await startTieredBroker(dataDir, port, settings);
      client = new ClusterClient({ bootstrap: `127.0.0.1:${port}` });
      const configs = [['remote.storage.enable', 'true'], ['segment.bytes', String(SEGMENT_BYTES)], ['local.retention.bytes', '0']].map(([name, v]) => ({ name, value: v }));
      const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: TOPIC, numPartitions: 1, replicationFactor: 1, assignments: [], configs }], timeoutMs: 10_000, validateOnly: false }, 7);
      assert.equal(created.topics[0].errorCode, 0, created.topics[0].errorMessage);
    });

    after(async () => {
      client?.close();
      if (broker !== null && broker.child.exitCode === null) broker.child.kill('SIGCONT');
      await killBroker(broker);
      if (s3 !== null) await stopS3Server(s3);
      if (remoteDir !== '') rmSync(remoteDir, { recursive: true, force: true });
    }, { timeout: 30_000 });

    it('the segment is copied once, the half-written copy is deleted, every offset reads back once and intact', async (t) => {
      // Watch for the half-written log object while producing; freeze the broker the moment it is there.
      let frozen = false;
      const watcher = (async () => {
        const deadline = Date.now() + 120_000;
        while (!frozen && Date.now() < deadline) {
          if (halfWritten()) { broker!.child.kill('SIGSTOP'); frozen = true; return; }
          await new Promise((r) => setTimeout(r, 1));
        }
      })();
      const producer = new Kafka({ brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING, retry: { retries: 1 } }).producer();
      await producer.connect();
      let produced = 0;
      // In the background: a send in flight when the broker freezes gets no answer until it is killed.
      const producing = (async () => {
        for (; produced < RECORDS && !frozen; produced += 50) {
          await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: 50 }, (_, j) => ({ key: `k${produced + j}`, value: value(produced + j) })) });
        }
      })();
      await Promise.race([watcher, producing]);
      await watcher;
      assert.ok(frozen, `the upload was seen half written (${produced} records produced, objects: ${objects().join(', ')})`);
      // Mid-upload: the segment's indexes are in the store, its log object is not.
      const atKill = objects();
      const partial = [...new Set(atKill.map((f) => OBJECT.exec(f)!).filter((m) => m[3] === '.index').map((m) => m[2]!))]
        .filter((id) => !atKill.some((f) => f.endsWith(`${id}.log`)));
      assert.equal(partial.length, 1, `one segment with its indexes and without its log object in the store: ${atKill.join(', ')}`);
      const orphanId = partial[0]!;
      t.diagnostic(`frozen after ${produced} records; in the store: ${atKill.length} objects; half-written copy ${orphanId}`);
      await killBroker(broker);
      broker = null;
      client!.close();
      await producing.catch(() => undefined);
      await producer.disconnect().catch(() => undefined);

      broker = await startTieredBroker(dataDir, port, settings);
      client = new ClusterClient({ bootstrap: `127.0.0.1:${port}` });
      const written = await listOffset(client, TOPIC, -1n);
      assert.ok(written >= produced && written > SEGMENT_BYTES / (VALUE_BYTES + 100), `${written} records survived the kill (${produced} acknowledged)`);
      // The restarted leader copies the segment again and deletes the half-written copy.
      const histories = await until(90_000, 'the segment copied again and the half-written copy deleted', async () => {
        const tiered = await listOffset(client!, TOPIC, -5n);
        const local = await listOffset(client!, TOPIC, -4n);
        const h = segmentHistories(await remoteLogMetadataHistory(client!), TOPIC);
        return tiered >= 0 && local === tiered + 1 && h.get(orphanId)?.states.at(-1) === S.DELETE_SEGMENT_FINISHED ? h : undefined;
      }, 200);
      assert.deepEqual(histories.get(orphanId)!.states, [S.COPY_SEGMENT_STARTED, S.DELETE_SEGMENT_STARTED, S.DELETE_SEGMENT_FINISHED],
        'the half-written copy: started, never finished, deleted');
      // Exactly one finished copy per offset range, the ranges contiguous from 0.
      const finished = [...histories].filter(([, h]) => h.states.at(-1) === S.COPY_SEGMENT_FINISHED).sort(([, a], [, b]) => a.startOffset - b.startOffset);
      assert.ok(finished.length >= 1);
      assert.equal(finished[0]![1].startOffset, 0);
      for (let i = 1; i < finished.length; i++) assert.equal(finished[i]![1].startOffset, finished[i - 1]![1].endOffset + 1, 'finished copies neither overlap nor leave a gap');
      assert.equal(await listOffset(client, TOPIC, -5n), finished.at(-1)![1].endOffset);
      for (const [id, h] of histories) {
        if (h.states.at(-1) !== S.COPY_SEGMENT_FINISHED) assert.equal(h.states.at(-1), S.DELETE_SEGMENT_FINISHED, `copy ${id}: ${h.states.join(',')}`);
      }
      // The store holds the finished copies' objects and nothing of the half-written one.
      const finishedIds = new Set(finished.map(([id]) => id));
      await until(30_000, 'the orphan\'s objects gone', async () => (objects().some((f) => f.includes(orphanId)) ? undefined : true), 100);
      const left = objects();
      assert.deepEqual(left.filter((f) => !finishedIds.has(OBJECT.exec(f)![2]!)), [], 'no object of an unfinished or deleted copy');
      for (const id of finishedIds) assert.ok(left.some((f) => f.endsWith(`${id}.log`)), `copy ${id} has its log object`);
      if (backend === 's3') t.diagnostic(`multipart uploads never completed, left in s3rver: ${readdirSync(s3UploadsDir(s3!)).length}`);

      const { offsets, values } = await readAllWithKafkajs(`127.0.0.1:${port}`, TOPIC, written, `upload-kill-${backend}`);
      for (let i = 0; i < written; i++) {
        if (offsets[i] !== i || values[i] !== value(i)) assert.fail(`record ${i}: offset ${offsets[i]}, value ${values[i]?.slice(0, 20)}`);
      }
      assert.equal(offsets.length, written);
    });
  });
}

uploadKillSuite('s3');
uploadKillSuite('local');

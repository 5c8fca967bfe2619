// A full disk, for real: `logline server` processes whose log.dirs is on a small tmpfs this test
// mounts (root only), filled by producers at acks=all.
//
// With the floor (log.dir.min.free.bytes): produce is refused with NOT_ENOUGH_REPLICAS and the
// broker stays up; consumers keep reading and committing, DeleteRecords answers, /metrics,
// /v1/node and `logline doctor` say so; librdkafka (kcat) and kafkajs retry meanwhile, and both
// get through once a topic deletion, then retention, frees space. Every acknowledged record is
// read back at the end.
//
// Without it (0): the write that meets ENOSPC takes the directory offline and the broker halts
// (exit 1), as Kafka's does; once space is freed it restarts cleanly and every acknowledged
// record is there.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { killProcess, runProcess, startServerProcess, until, within } from './process-helpers.js';

const MiB = 1 << 20;
const root = process.getuid?.() === 0;
const hasKcat = spawnSync('kcat', ['-V']).status === 0;
if (!hasKcat && process.env.CI) throw new Error('kcat is missing in CI (apt-get install -y kcat)');
/** Debian's python3-kafka (kafka-python 2.0.2) is seen by the system python. */
const PYTHON = '/usr/bin/python3';
const hasKafkaPython = spawnSync(PYTHON, ['-c', 'import kafka']).status === 0;
if (!hasKafkaPython && process.env.CI) throw new Error('kafka-python is missing in CI (apt-get install -y python3-kafka)');
const skip = !root ? 'not root: this test mounts a tmpfs (mount -t tmpfs needs root; CI runs as root)' : !hasKcat ? 'kcat is not installed (apt-get install kcat)' : false;
/** Records per produce request while filling, and their value size. */
const BATCH = 64;
const VALUE_BYTES = 1024;

const mounts: string[] = [];
const children: ChildProcess[] = [];

function mountTmpfs(sizeMiB: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'logline-diskfull-'));
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', dir]);
  if (r.status !== 0) throw new Error(`mount -t tmpfs ${dir}: ${r.stderr}`);
  mounts.push(dir);
  return dir;
}

after(async () => {
  for (const c of children) await killProcess(c);
  for (const dir of mounts) {
    if (spawnSync('umount', [dir]).status !== 0) spawnSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  }
}, { timeout: 30_000 });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** kafkajs' error type, through its retry wrappers. */
function errorType(e: unknown): string {
  for (let x = e as { type?: string; originalError?: unknown; cause?: unknown } | undefined; x; x = (x.originalError ?? x.cause) as typeof x) {
    if (typeof x.type === 'string') return x.type;
  }
  return (e as Error).message;
}

function kafka(bootstrap: string, retries: number): Kafka {
  return new Kafka({ clientId: 'disk-full', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries, initialRetryTime: 200, maxRetryTime: 2000 } });
}

const value = (id: string) => `${id}:${'x'.repeat(VALUE_BYTES - id.length - 1)}`;

/**
 * Produces batches of BATCH records (acks=all) to `topic` until the broker refuses one, or until
 * `maxBytes`; the acknowledged values are added to `acked`. Returns the refusal's error type, or
 * null when `maxBytes` was reached first.
 */
async function fill(producer: Producer, topic: string, prefix: string, acked: string[], maxBytes: number): Promise<string | null> {
  let sent = 0;
  for (let n = 0; sent < maxBytes; n++) {
    const values = Array.from({ length: BATCH }, (_, i) => value(`${prefix}-${n}-${i}`));
    try {
      await producer.send({ topic, acks: -1, messages: values.map((v) => ({ value: v })) });
    } catch (e) {
      return errorType(e);
    }
    acked.push(...values.map((v) => v.slice(0, v.indexOf(':'))));
    sent += BATCH * VALUE_BYTES;
  }
  return null;
}

/** Every value of `topic` (ids only), read with kcat (librdkafka) from the beginning to the end. */
async function readAll(bootstrap: string, topic: string): Promise<Set<string>> {
  const c = await runProcess('kcat', ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%s\\n'], null, 120_000);
  assert.equal(c.code, 0, c.stderr);
  return new Set(c.stdout.split('\n').filter((l) => l !== '').map((l) => l.slice(0, l.indexOf(':'))));
}

async function getText(url: string): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  assert.equal(res.status, 200, url);
  return res.text();
}

test('below log.dir.min.free.bytes produce is refused and retried, reads, commits and DeleteRecords go on, and writes resume when a topic deletion or retention frees space; nothing acknowledged is lost',
  { skip, timeout: 300_000 }, async () => {
    const mount = mountTmpfs(64);
    const dataDir = join(mount, 'data');
    const server = await startServerProcess(dataDir, [
      '--set', `log.dir.min.free.bytes=${16 * MiB}`, '--set', `log.dir.free.bytes.alert.threshold=${24 * MiB}`,
      '--set', `log.segment.bytes=${MiB}`, '--set', 'log.retention.check.interval.ms=1000', '--set', 'log.segment.delete.delay.ms=0',
    ]);
    children.push(server.child);
    const bootstrap = `127.0.0.1:${server.port}`;
    const http = /http listening on http:\/\/([\d.]+:\d+)/.exec(server.output())![1]!;
    const admin = kafka(bootstrap, 5).admin();
    await admin.connect();
    const producers: Producer[] = [];
    try {
      await admin.createTopics({ waitForLeaders: true, topics: [{ topic: 'ballast-deleted', numPartitions: 1 }, { topic: 'ballast-retained', numPartitions: 1 }, { topic: 'fill', numPartitions: 2 }] });
      const strict = kafka(bootstrap, 0).producer({ allowAutoTopicCreation: false });
      producers.push(strict);
      await strict.connect();
      // Ballast, freed later: 12 MiB by kcat (librdkafka), 12 MiB by kafkajs, at acks=all.
      const kcatBallast = await runProcess('kcat', ['-P', '-b', bootstrap, '-t', 'ballast-deleted', '-X', 'acks=all', '-X', 'enable.idempotence=true'],
        Array.from({ length: (12 * MiB) / VALUE_BYTES }, (_, i) => value(`bd-${i}`)).join('\n') + '\n', 120_000);
      assert.equal(kcatBallast.code, 0, kcatBallast.stderr);
      assert.equal(await fill(strict, 'ballast-retained', 'br', [], 12 * MiB), null);

      // 1. Fill to the floor: refused with NOT_ENOUGH_REPLICAS, and the broker stays up.
      const acked: string[] = [];
      const refused = await within(120_000, 'filling to the floor', fill(strict, 'fill', 'a', acked, 64 * MiB));
      assert.equal(refused, 'NOT_ENOUGH_REPLICAS', `the refusal (after ${acked.length} records acknowledged)`);
      assert.ok(acked.length > 0);
      assert.equal(server.child.exitCode, null, 'the broker is up');
      assert.match(server.output(), /below log\.dir\.min\.free\.bytes .*produce to its partitions is refused/);

      // What an operator sees: metrics, /v1/node, doctor's FAIL.
      const metrics = await getText(`http://${http}/metrics`);
      assert.match(metrics, /kafka_log_logmanager_logdirectoryfreespacealert\{logDirectory="[^"]+"\} 2/);
      assert.match(metrics, /kafka_log_logmanager_logdirectoryproducerefused_total\{logDirectory="[^"]+"\} [1-9]/);
      const usable = Number(/kafka_log_logmanager_logdirectoryusablebytes\{logDirectory="[^"]+"\} (\d+)/.exec(metrics)![1]);
      assert.ok(usable < 16 * MiB && usable > 8 * MiB, `usable ${usable}: under the floor, not at the end of the disk`);
      const node = JSON.parse(await getText(`http://${http}/v1/node`));
      assert.equal(node.logDirs[0].state, 'full');
      const doctor = await runProcess(process.execPath, ['bin/logline.js', 'doctor', '--bootstrap-server', bootstrap, '--http', http, '--lag-interval-ms', '0'], null, 60_000);
      assert.equal(doctor.code, 1, doctor.stdout + doctor.stderr);
      assert.match(doctor.stdout, /FAIL\s+disk usage.*below log\.dir\.min\.free\.bytes 16\.0 MiB \(produce refused/);

      // Consumers read everything acknowledged and commit (__consumer_offsets is not refused).
      const consumer = kafka(bootstrap, 5).consumer({ groupId: 'readers' });
      await consumer.connect();
      await consumer.subscribe({ topic: 'fill', fromBeginning: true });
      const seen = new Set<string>();
      await consumer.run({ autoCommitInterval: 200, eachMessage: async ({ message }) => { const v = message.value!.toString(); seen.add(v.slice(0, v.indexOf(':'))); } });
      await until(60_000, `the group reads the ${acked.length} acknowledged records`, async () => (seen.size >= acked.length ? true : undefined), 100);
      // (A request refused for one partition may have been written to the other: the log can hold
      // more than kafkajs reported acknowledged.)
      const end = (await admin.fetchTopicOffsets('fill')).reduce((n, p) => n + Number(p.high), 0);
      assert.ok(end >= acked.length, `log end offsets ${end}, ${acked.length} acknowledged`);
      await until(30_000, `the group's offsets committed to the end (${end})`, async () => {
        const offsets = await admin.fetchOffsets({ groupId: 'readers', topics: ['fill'] });
        const committed = offsets[0]!.partitions.reduce((n, p) => n + Number(p.offset), 0);
        return committed === end ? true : undefined;
      }, 200);
      await consumer.disconnect();
      for (const id of acked) assert.ok(seen.has(id), `${id} read`);
      // DeleteRecords answers (a few records: no segment freed).
      await admin.fetchTopicMetadata({ topics: ['ballast-retained'] });
      await admin.deleteTopicRecords({ topic: 'ballast-retained', partitions: [{ partition: 0, offset: '10' }] });
      assert.equal((await admin.fetchTopicOffsets('ballast-retained'))[0]!.low, '10');

      // 2. Clients that retry: librdkafka (kcat, idempotent), kafkajs (idempotent) and kafka-python
      // wait out the floor...
      const kcatIds = Array.from({ length: 300 }, (_, i) => `kcat-${i}`);
      const kcat = runProcess('kcat', ['-P', '-b', bootstrap, '-t', 'fill', '-X', 'acks=all', '-X', 'enable.idempotence=true', '-X', 'message.timeout.ms=120000'],
        kcatIds.map(value).join('\n') + '\n', 150_000);
      let kcatDone = false;
      void kcat.then(() => { kcatDone = true; });
      const patient = kafka(bootstrap, 100).producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
      producers.push(patient);
      await patient.connect();
      const jsIds = Array.from({ length: 50 }, (_, i) => `js-${i}`);
      const jsSend = patient.send({ topic: 'fill', acks: -1, messages: jsIds.map((id) => ({ value: value(id) })) });
      let jsDone = false;
      void jsSend.then(() => { jsDone = true; }, () => { jsDone = true; });
      const pyIds = Array.from({ length: 100 }, (_, i) => `py-${i}`);
      const python = hasKafkaPython ? runProcess(PYTHON, ['test/broker/python/floor_producer.py', bootstrap, 'fill', 'py', String(pyIds.length), String(VALUE_BYTES)], null, 150_000) : null;
      let pythonDone = false;
      void python?.then(() => { pythonDone = true; });
      await sleep(3000);
      assert.equal(pythonDone, false, 'kafka-python is still retrying below the floor');
      assert.equal(kcatDone, false, 'kcat is still retrying below the floor');
      assert.equal(jsDone, false, 'kafkajs is still retrying below the floor');

      // ...and get through once deleting a topic frees space.
      await admin.deleteTopics({ topics: ['ballast-deleted'], timeout: 30_000 });
      const k = await within(150_000, 'kcat delivering after the topic deletion', kcat);
      assert.equal(k.code, 0, `kcat: ${k.stderr}`);
      await within(120_000, 'kafkajs delivering after the topic deletion', jsSend);
      acked.push(...kcatIds, ...jsIds);
      if (python !== null) {
        const py = await within(150_000, 'kafka-python delivering after the topic deletion', python);
        assert.equal(py.code, 0, `kafka-python: ${py.stdout}${py.stderr}`);
        assert.equal(JSON.parse(py.stdout.trim().split('\n').at(-1)!).acked, pyIds.length);
        acked.push(...pyIds);
      }
      assert.equal(JSON.parse(await getText(`http://${http}/v1/node`)).logDirs[0].state !== 'full', true);

      // 3. Fill to the floor again; retention (retention.bytes lowered) frees space and writes resume.
      // (A new producer: kafkajs' metadata refreshes fail on the topic deleted under the first.)
      const strict2 = kafka(bootstrap, 0).producer({ allowAutoTopicCreation: false });
      producers.push(strict2);
      await strict2.connect();
      assert.equal(await within(120_000, 'filling to the floor again', fill(strict2, 'fill', 'b', acked, 64 * MiB)), 'NOT_ENOUGH_REPLICAS');
      await admin.alterConfigs({ validateOnly: false, resources: [{ type: 2 /* TOPIC */, name: 'ballast-retained', configEntries: [{ name: 'retention.bytes', value: String(MiB) }] }] });
      await until(60_000, 'a produce accepted after retention', async () => (await fill(strict2, 'fill', 'c', acked, BATCH * VALUE_BYTES)) === null ? true : undefined, 500);

      // Every acknowledged record is there.
      const all = await readAll(bootstrap, 'fill');
      const missing = acked.filter((id) => !all.has(id));
      assert.deepEqual(missing.slice(0, 10), [], `${missing.length} of ${acked.length} acknowledged records missing`);
      assert.equal(server.child.exitCode, null, 'the broker never stopped');
      assert.doesNotMatch(server.output(), /is offline after an I\/O error/);
    } finally {
      for (const p of producers) await p.disconnect().catch(() => {});
      await admin.disconnect().catch(() => {});
      await killProcess(server.child);
    }
  });

test('without a floor, ENOSPC takes the log directory offline and the broker halts; once space is freed it restarts cleanly with every acknowledged record',
  { skip, timeout: 300_000 }, async () => {
    const mount = mountTmpfs(32);
    // Space the test frees after the halt (the operator's "delete something").
    writeFileSync(join(mount, 'reserve'), Buffer.alloc(6 * MiB));
    const dataDir = join(mount, 'data');
    mkdirSync(dataDir);
    const args = ['--set', 'log.dir.min.free.bytes=0', '--set', `log.segment.bytes=${MiB}`];
    const first = await startServerProcess(dataDir, args);
    children.push(first.child);
    const bootstrap = `127.0.0.1:${first.port}`;
    const admin = kafka(bootstrap, 5).admin();
    await admin.connect();
    const acked: string[] = [];
    const producer = kafka(bootstrap, 0).producer({ allowAutoTopicCreation: false });
    try {
      await admin.createTopics({ waitForLeaders: true, topics: [{ topic: 'fill', numPartitions: 2 }] });
      await producer.connect();
      const halted = new Promise<number | null>((resolve) => first.child.once('exit', (code) => resolve(code)));
      const refused = await within(120_000, 'filling the disk', fill(producer, 'fill', 'a', acked, 64 * MiB));
      assert.notEqual(refused, null, 'the disk filled');
      assert.equal(await within(60_000, 'the broker halting', halted), 1, first.output());
      assert.match(first.output(), /ENOSPC/);
      assert.match(first.output(), /log directory .* failed .*shutting down the broker/);
    } finally {
      await producer.disconnect().catch(() => {});
      await admin.disconnect().catch(() => {});
      await killProcess(first.child);
    }
    assert.ok(acked.length > 0);
    rmSync(join(mount, 'reserve'));
    const second = await startServerProcess(dataDir, args);
    children.push(second.child);
    try {
      const again = `127.0.0.1:${second.port}`;
      const all = await readAll(again, 'fill');
      const missing = acked.filter((id) => !all.has(id));
      assert.deepEqual(missing.slice(0, 10), [], `${missing.length} of ${acked.length} acknowledged records missing after the restart`);
      // It takes writes again.
      const p = kafka(again, 5).producer({ allowAutoTopicCreation: false });
      await p.connect();
      await p.send({ topic: 'fill', acks: -1, messages: [{ value: value('after-restart') }] });
      await p.disconnect();
    } finally {
      await killProcess(second.child);
    }
  });

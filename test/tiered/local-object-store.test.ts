// The local directory backend: the storage contract, atomic writes, and the directory layout
// Kafka's LocalTieredStorage uses.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChunkedStorageManager, LocalObjectStore, RemoteResourceNotFoundError, RemoteStorageError, ReadCache } from '../../src/tiered/index.js';
import { remoteStorageContract, segmentMetadata, readAll, TOPIC_ID } from './storage-contract.js';

const CHUNK = 64 * 1024;

remoteStorageContract('local directory', {
  logBytes: 300_000, chunkBytes: CHUNK, partitionPrefix: `orders-0-${TOPIC_ID}/`,
  open: async () => {
    const root = mkdtempSync(join(tmpdir(), 'logline-remote-'));
    const store = await LocalObjectStore.open(root);
    const rsm = new ChunkedStorageManager({ store, chunkBytes: CHUNK, chunkCache: new ReadCache(4 * CHUNK), indexCache: new ReadCache(1 << 20) });
    return { rsm, list: (p) => store.list(p), close: async () => { await rsm.close(); rmSync(root, { recursive: true, force: true }); } };
  },
});

describe('LocalObjectStore', () => {
  it('lays segments out as <topic>-<partition>-<topicId>/<20-digit start offset>-<uuid>.<suffix>', async () => {
    const root = mkdtempSync(join(tmpdir(), 'logline-remote-'));
    const src = mkdtempSync(join(tmpdir(), 'logline-seg-'));
    try {
      for (const ext of ['.log', '.index', '.timeindex', '.snapshot']) writeFileSync(join(src, `s${ext}`), Buffer.from('x'));
      const rsm = new ChunkedStorageManager({ store: await LocalObjectStore.open(root), chunkBytes: CHUNK });
      const m = segmentMetadata({ size: 1 });
      await rsm.copyLogSegmentData(m, { logSegment: join(src, 's.log'), offsetIndex: join(src, 's.index'), timeIndex: join(src, 's.timeindex'), producerSnapshotIndex: join(src, 's.snapshot'), leaderEpochIndex: Buffer.from('0\n0\n') });
      const base = `00000000000000000100-${m.remoteLogSegmentId.id}`;
      assert.deepEqual(readdirSync(join(root, `orders-0-${TOPIC_ID}`)).sort(),
        [`${base}.index`, `${base}.leader-epoch-checkpoint`, `${base}.log`, `${base}.snapshot`, `${base}.timeindex`]);
      await rsm.deleteLogSegmentData(m);
      assert.equal(existsSync(join(root, `orders-0-${TOPIC_ID}`)), false, 'the emptied partition folder is removed');
    } finally {
      rmSync(root, { recursive: true, force: true });
      rmSync(src, { recursive: true, force: true });
    }
  });

  it('a temporary file left by a crash is never listed and is removed on open', async () => {
    const root = mkdtempSync(join(tmpdir(), 'logline-remote-'));
    try {
      mkdirSync(join(root, 'p'));
      writeFileSync(join(root, 'p', 'a.log.tmp-0123456789ab'), 'half');
      writeFileSync(join(root, 'p', 'b.log'), 'whole');
      const store = await LocalObjectStore.open(root);
      assert.deepEqual(await store.list(''), ['p/b.log']);
      assert.equal(existsSync(join(root, 'p', 'a.log.tmp-0123456789ab')), false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('putAll writes the indexes, then the log (copied by the kernel, byte for byte); a failed write leaves no log object and no temporary file', async () => {
    const root = mkdtempSync(join(tmpdir(), 'logline-remote-'));
    const src = mkdtempSync(join(tmpdir(), 'logline-seg-'));
    try {
      const log = randomBytes(3 * 1024 * 1024 + 17);
      writeFileSync(join(src, 's.log'), log);
      writeFileSync(join(src, 's.index'), Buffer.from('index'));
      const store = await LocalObjectStore.open(root);
      const files = () => readdirSync(join(root, 'p')).sort();

      await store.putAll([{ key: 'p/a.index', source: { path: join(src, 's.index') } }, { key: 'p/a.leader-epoch-checkpoint', source: { bytes: Buffer.from('0\n0\n') } }],
        { key: 'p/a.log', source: { path: join(src, 's.log') } });
      assert.deepEqual(files(), ['a.index', 'a.leader-epoch-checkpoint', 'a.log']);
      assert.ok(readFileSync(join(root, 'p', 'a.log')).equals(log), 'the log object holds the segment byte for byte');
      assert.equal(readFileSync(join(root, 'p', 'a.index'), 'utf8'), 'index');

      // An index that cannot be written: the log is never written.
      await assert.rejects(store.putAll([{ key: 'p/b.index', source: { path: join(src, 's.index') } }, { key: 'p/b.snapshot', source: { path: join(src, 'missing') } }],
        { key: 'p/b.log', source: { path: join(src, 's.log') } }), RemoteResourceNotFoundError);
      assert.deepEqual(files().filter((f) => f.startsWith('b')), ['b.index'], 'no log object, no temporary file');

      // The log itself gone (the segment deleted locally meanwhile): the indexes stay, no log object.
      await assert.rejects(store.putAll([{ key: 'p/c.index', source: { bytes: Buffer.from('i') } }], { key: 'p/c.log', source: { path: join(src, 'gone.log') } }), RemoteResourceNotFoundError);
      assert.deepEqual(files().filter((f) => f.startsWith('c')), ['c.index']);

      // A retried copy overwrites what an attempt left.
      await store.putAll([{ key: 'p/c.index', source: { bytes: Buffer.from('j') } }], { key: 'p/c.log', source: { path: join(src, 's.log') } });
      assert.equal(readFileSync(join(root, 'p', 'c.index'), 'utf8'), 'j');
      assert.ok(readFileSync(join(root, 'p', 'c.log')).equals(log));
      assert.deepEqual(files().filter((f) => f.includes('.tmp-')), []);
    } finally {
      rmSync(root, { recursive: true, force: true });
      rmSync(src, { recursive: true, force: true });
    }
  });

  it('a segment\'s log is linked, not copied, where one file system holds both; its indexes are copied; link.segments=false copies it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'logline-remote-'));
    const src = mkdtempSync(join(tmpdir(), 'logline-seg-'));
    try {
      const log = randomBytes(1024 * 1024 + 3);
      writeFileSync(join(src, 's.log'), log);
      writeFileSync(join(src, 's.index'), Buffer.from('index'));
      const rsm = new ChunkedStorageManager({ store: await LocalObjectStore.open(root), chunkBytes: CHUNK });
      const m = segmentMetadata({ size: log.length });
      await rsm.copyLogSegmentData(m, { logSegment: join(src, 's.log'), offsetIndex: join(src, 's.index'), timeIndex: join(src, 's.index'), producerSnapshotIndex: join(src, 's.index'), leaderEpochIndex: Buffer.from('0\n0\n') });
      const base = join(root, `orders-0-${TOPIC_ID}`, `00000000000000000100-${m.remoteLogSegmentId.id}`);
      assert.equal(statSync(`${base}.log`).ino, statSync(join(src, 's.log')).ino, 'the log object is the segment file itself');
      assert.equal(statSync(join(src, 's.log')).nlink, 2);
      assert.equal(statSync(join(src, 's.index')).nlink, 1, 'indexes are copies (the log rewrites them in place)');
      assert.ok((await readAll(await rsm.fetchLogSegment(m, 0))).equals(log));
      await rsm.deleteLogSegmentData(m);
      assert.equal(statSync(join(src, 's.log')).nlink, 1, 'deleting the object leaves the segment file');

      const copying = new ChunkedStorageManager({ store: await LocalObjectStore.open(root, { linkFiles: false }), chunkBytes: CHUNK });
      await copying.copyLogSegmentData(m, { logSegment: join(src, 's.log'), offsetIndex: join(src, 's.index'), timeIndex: join(src, 's.index'), producerSnapshotIndex: join(src, 's.index'), leaderEpochIndex: Buffer.from('0\n0\n') });
      assert.notEqual(statSync(`${base}.log`).ino, statSync(join(src, 's.log')).ino);
      assert.ok(readFileSync(`${base}.log`).equals(log));
    } finally {
      rmSync(root, { recursive: true, force: true });
      rmSync(src, { recursive: true, force: true });
    }
  });

  it('refuses keys that would leave its directory', async () => {
    const root = mkdtempSync(join(tmpdir(), 'logline-remote-'));
    try {
      const store = await LocalObjectStore.open(root);
      for (const key of ['../x', '/etc/passwd', 'a//b', 'a/./b', '']) {
        await assert.rejects(store.put(key, { bytes: Buffer.from('x') }), RemoteStorageError);
      }
      const rsm = new ChunkedStorageManager({ store, chunkBytes: CHUNK });
      const m = segmentMetadata({ size: 1 });
      const evil = { ...m, remoteLogSegmentId: { ...m.remoteLogSegmentId, topicIdPartition: { ...m.remoteLogSegmentId.topicIdPartition, topic: '..' } } };
      await assert.rejects(rsm.fetchLogSegment(evil, 0), RemoteStorageError);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('reads a range chunk by chunk: only the chunks it covers are fetched', async () => {
    const root = mkdtempSync(join(tmpdir(), 'logline-remote-'));
    try {
      const store = await LocalObjectStore.open(root);
      const ranges: [number, number][] = [];
      const spy = Object.assign(Object.create(store) as LocalObjectStore, {
        getRange: (key: string, s: number, e: number) => { ranges.push([s, e]); return store.getRange(key, s, e); },
      });
      const rsm = new ChunkedStorageManager({ store: spy, chunkBytes: 1000 });
      const m = segmentMetadata({ size: 10_000 });
      await store.put(`orders-0-${TOPIC_ID}/00000000000000000100-${m.remoteLogSegmentId.id}.log`, { bytes: Buffer.alloc(10_000, 7) });
      const got = await readAll(await rsm.fetchLogSegment(m, 2500, 4499));
      assert.equal(got.length, 2000);
      assert.deepEqual(ranges, [[2000, 3000], [3000, 4000], [4000, 5000]]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

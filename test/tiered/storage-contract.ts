// The contract every RemoteStorageManager backend must keep, as a suite run once per backend
// (local directory, S3): what a broker copies is what it reads back, byte for byte, for any range.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import fc from 'fast-check';
import {
  IndexType, RemoteLogSegmentState, RemoteResourceNotFoundError, RemoteStorageError,
  type LogSegmentData, type RemoteLogSegmentMetadata, type RemoteStorageManager,
} from '../../src/tiered/index.js';

export interface BackendUnderTest {
  readonly rsm: RemoteStorageManager;
  /** Object keys under a prefix, read straight from the backend. */
  list(prefix: string): Promise<string[]>;
  close(): Promise<void>;
}

export const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';
export const uuid = (): string => randomBytes(16).toString('base64url');

export function segmentMetadata(o: Partial<RemoteLogSegmentMetadata> & { size: number; partition?: number }): RemoteLogSegmentMetadata {
  return {
    remoteLogSegmentId: { topicIdPartition: { topicId: TOPIC_ID, topic: 'orders', partition: o.partition ?? 0 }, id: uuid() },
    startOffset: 100, endOffset: 199, maxTimestampMs: 5_000, brokerId: 1, eventTimestampMs: 1_000,
    segmentLeaderEpochs: [{ leaderEpoch: 0, startOffset: 100 }], segmentSizeInBytes: o.size, customMetadata: null,
    state: RemoteLogSegmentState.COPY_SEGMENT_STARTED, ...o,
  };
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

interface SegmentFiles { data: LogSegmentData; log: Buffer; offsetIndex: Buffer; timeIndex: Buffer; txnIndex: Buffer; snapshot: Buffer }

function writeSegment(dir: string, name: string, logBytes: number, withTxn: boolean): SegmentFiles {
  const files = { log: randomBytes(logBytes), offsetIndex: randomBytes(8 * 100), timeIndex: randomBytes(12 * 100), txnIndex: randomBytes(34 * 3), snapshot: randomBytes(77) };
  const path = (ext: string): string => join(dir, `${name}${ext}`);
  writeFileSync(path('.log'), files.log);
  writeFileSync(path('.index'), files.offsetIndex);
  writeFileSync(path('.timeindex'), files.timeIndex);
  writeFileSync(path('.snapshot'), files.snapshot);
  if (withTxn) writeFileSync(path('.txnindex'), files.txnIndex);
  return {
    ...files,
    data: {
      logSegment: path('.log'), offsetIndex: path('.index'), timeIndex: path('.timeindex'),
      ...(withTxn ? { transactionIndex: path('.txnindex') } : {}),
      producerSnapshotIndex: path('.snapshot'), leaderEpochIndex: Buffer.from('0\n1\n0 100\n'),
    },
  };
}

/**
 * Runs the contract against a backend. `logBytes` sizes the segment's log (over the S3 multipart
 * threshold where the backend has one); `partitionPrefix` is where the backend's objects of
 * partition orders-0 appear in `list`.
 */
export function remoteStorageContract(name: string, o: { open: () => Promise<BackendUnderTest>; logBytes: number; partitionPrefix: string; chunkBytes: number }): void {
  describe(`RemoteStorageManager contract: ${name}`, () => {
    let backend: BackendUnderTest;
    let dir: string;
    let seg: SegmentFiles;
    let meta: RemoteLogSegmentMetadata;
    before(async () => {
      backend = await o.open();
      dir = mkdtempSync(join(tmpdir(), 'logline-tiered-'));
      seg = writeSegment(dir, '00000000000000000100', o.logBytes, true);
      meta = segmentMetadata({ size: o.logBytes });
      assert.equal(await backend.rsm.copyLogSegmentData(meta, seg.data), null);
    });
    after(async () => {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('a copied segment reads back whole, byte for byte', async () => {
      assert.ok((await readAll(await backend.rsm.fetchLogSegment(meta, 0))).equals(seg.log));
    });

    it('any byte range reads back as that slice of the log (end inclusive, clamped to the end)', async () => {
      await fc.assert(fc.asyncProperty(
        fc.integer({ min: 0, max: o.logBytes - 1 }), fc.integer({ min: 0, max: 3 * o.chunkBytes }),
        async (start, length) => {
          const end = start + length;
          const got = await readAll(await backend.rsm.fetchLogSegment(meta, start, end));
          assert.ok(got.equals(seg.log.subarray(start, Math.min(end, o.logBytes - 1) + 1)));
        },
      ), { numRuns: 25 });
    });

    it('every index reads back as written; a transaction index never written is not found', async () => {
      assert.ok((await backend.rsm.fetchIndex(meta, IndexType.OFFSET)).equals(seg.offsetIndex));
      assert.ok((await backend.rsm.fetchIndex(meta, IndexType.TIMESTAMP)).equals(seg.timeIndex));
      assert.ok((await backend.rsm.fetchIndex(meta, IndexType.TRANSACTION)).equals(seg.txnIndex));
      assert.ok((await backend.rsm.fetchIndex(meta, IndexType.PRODUCER_SNAPSHOT)).equals(seg.snapshot));
      assert.equal((await backend.rsm.fetchIndex(meta, IndexType.LEADER_EPOCH)).toString(), '0\n1\n0 100\n');
      const other = segmentMetadata({ size: 10, startOffset: 200, endOffset: 210 });
      const small = writeSegment(dir, '00000000000000000200', 10, false);
      await backend.rsm.copyLogSegmentData(other, small.data);
      await assert.rejects(backend.rsm.fetchIndex(other, IndexType.TRANSACTION), RemoteResourceNotFoundError);
      await backend.rsm.deleteLogSegmentData(other);
    });

    it('a segment never copied is not found; positions outside the segment are refused', async () => {
      const missing = segmentMetadata({ size: 100 });
      await assert.rejects(backend.rsm.fetchLogSegment(missing, 0), RemoteResourceNotFoundError);
      await assert.rejects(backend.rsm.fetchIndex(missing, IndexType.OFFSET), RemoteResourceNotFoundError);
      await assert.rejects(backend.rsm.fetchLogSegment(meta, o.logBytes), RemoteStorageError);
      await assert.rejects(backend.rsm.fetchLogSegment(meta, -1), RemoteStorageError);
      await assert.rejects(backend.rsm.fetchLogSegment(meta, 10, 5), RemoteStorageError);
    });

    it('copying again with the same metadata overwrites (a retried copy)', async () => {
      const again = writeSegment(dir, 'retry', o.logBytes, true);
      await backend.rsm.copyLogSegmentData(meta, again.data);
      const got = await readAll(await backend.rsm.fetchLogSegment(meta, 0, 99));
      assert.ok(got.equals(again.log.subarray(0, 100)));
      seg = again;
    });

    it('deleting removes every object of the segment and may be repeated', async () => {
      const keys = await backend.list(o.partitionPrefix);
      assert.equal(keys.length, 6, keys.join(', '));
      assert.ok(keys.every((k) => k.includes(meta.remoteLogSegmentId.id)));
      await backend.rsm.deleteLogSegmentData(meta);
      await backend.rsm.deleteLogSegmentData(meta);
      assert.deepEqual(await backend.list(o.partitionPrefix), []);
      await assert.rejects(backend.rsm.fetchLogSegment(meta, 0), RemoteResourceNotFoundError);
    });
  });
}

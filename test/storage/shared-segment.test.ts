// A rolled segment's log file with a second name: the local-directory tier links a copied segment
// instead of copying it (src/tiered/local-object-store.ts). The log must never change such a file
// in place: a truncation into it, or appends to it as the active segment again, would rewrite the
// tier's object under it. On a real file system, since links are what is tested.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/util/index.js';
import { FileCache, NodeFileSystem, PartitionLog, logConfig } from '../../src/storage/index.js';
import { batch, dump } from './helpers.js';

function withLog(fn: (o: { dir: string; open: () => PartitionLog; tier: string }) => Promise<void>): () => Promise<void> {
  return async () => {
    const root = mkdtempSync(join(tmpdir(), 'logline-shared-segment-'));
    const dir = join(root, 'orders-0');
    const clock = new ManualClock(10_000);
    const open = () => PartitionLog.open({
      dir, files: new FileCache(new NodeFileSystem(), 64), config: logConfig({ segmentBytes: 400, indexIntervalBytes: 50 }), clock,
      recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: false,
    });
    try {
      await fn({ dir, open, tier: join(root, 'tier') });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  };
}

/** Links segment `i`'s log file as the tier would, and returns the link's path and the bytes it holds. */
function linkAsTier(log: PartitionLog, i: number, tier: string): { path: string; bytes: Buffer } {
  const source = log.segments[i]!.path('.log');
  const path = `${tier}-${i}.log`;
  linkSync(source, path);
  assert.equal(statSync(source).nlink, 2);
  return { path, bytes: readFileSync(path) };
}

test('a truncation into a linked segment gives the log its own copy: the link keeps its bytes, the log its new records', withLog(async ({ open, tier }) => {
  const log = open();
  for (let i = 0; i < 12; i++) await log.appendAsLeader(batch(3, { value: (j) => `a${i}.${j}` }), 0);
  assert.ok(log.segments.length >= 3, `${log.segments.length} segments`);
  const first = log.segments[0]!;
  const linked = linkAsTier(log, 0, tier);
  // A batch boundary: the second batch of the first segment goes.
  const cut = first.baseOffset + 3;
  assert.ok(cut < log.segments[1]!.baseOffset);

  log.truncateTo(cut);
  assert.equal(log.logEndOffset, cut);
  for (let i = 0; i < 3; i++) await log.appendAsLeader(batch(3, { value: (j) => `b${i}.${j}` }), 1);

  assert.deepEqual(readFileSync(linked.path), linked.bytes, 'the linked name still holds the segment as it was copied');
  assert.equal(statSync(log.segments[0]!.path('.log')).nlink, 1);
  const values = dump(log).map(([, , v]) => v);
  assert.deepEqual(values.slice(0, 6), ['a0.0', 'a0.1', 'a0.2', 'b0.0', 'b0.1', 'b0.2']);
  log.close();
}));

test('a log reopened with a linked last segment (a crash after a roll whose new segment had no file yet) appends to a copy of its own', withLog(async ({ open, tier }) => {
  let log = open();
  for (let i = 0; i < 3; i++) await log.appendAsLeader(batch(3, { value: (j) => `a${i}.${j}` }), 0);
  const last = log.segments.length - 1;
  const linked = linkAsTier(log, last, tier);
  const end = log.logEndOffset;
  log.close();

  log = open();
  assert.equal(log.logEndOffset, end);
  await log.appendAsLeader(batch(2, { value: (j) => `b${j}` }), 0);
  assert.deepEqual(readFileSync(linked.path), linked.bytes);
  assert.equal(statSync(log.segments[last]!.path('.log')).nlink, 1);
  assert.deepEqual(dump(log).slice(-2).map(([, , v]) => v), ['b0', 'b1']);
  log.close();
}));

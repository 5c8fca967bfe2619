import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileLogStore, FileQuorumStateStore, batchesOf, entriesOf } from '../../src/raft/index.js';
import { entries } from './helpers.js';

function tempDir(): string { return mkdtempSync(join(tmpdir(), 'raft-store-')); }

test('the quorum-state file round-trips and leaves no temp file behind', () => {
  const dir = tempDir();
  try {
    const store = new FileQuorumStateStore(dir);
    assert.equal(store.read(), undefined);
    store.write({ epoch: 3, votedId: 2 });
    store.write({ epoch: 4, leaderId: 1, votedId: 1 });
    assert.deepEqual(new FileQuorumStateStore(dir).read(), { epoch: 4, leaderId: 1, votedId: 1 });
    assert.deepEqual(readdirSync(dir), ['quorum-state']);
  } finally { rmSync(dir, { recursive: true }); }
});

test('the file log replays appends, truncations and snapshots, and ignores a torn tail', () => {
  const dir = tempDir();
  try {
    const log = new FileLogStore(dir);
    log.apply([{ kind: 'append', batches: batchesOf(entries([1, 1, 1, 2])) }]);
    log.apply([{ kind: 'truncate', offset: 3 }, { kind: 'append', batches: batchesOf(entries([3, 3], 3)) }]);
    log.apply([{ kind: 'snapshot', snapshot: { id: { endOffset: 2, epoch: 1 }, data: new Uint8Array([7, 8]) }, replaceLog: false }]);
    log.sync();
    log.close();
    appendFileSync(join(dir, 'raft.log'), Buffer.from([0, 0, 0, 50, 1, 2, 3]));
    const loaded = new FileLogStore(dir).load();
    assert.deepEqual(loaded.snapshot?.id, { endOffset: 2, epoch: 1 });
    assert.deepEqual([...loaded.snapshot!.data], [7, 8]);
    assert.deepEqual(entriesOf(loaded.batches).map((e) => [e.offset, e.epoch]), [[2, 1], [3, 3], [4, 3]]);
  } finally { rmSync(dir, { recursive: true }); }
});

// RegistryService's replay on a node that forwarded a write: its replica holds the writer's
// batch before its high watermark says it is committed (the high watermark comes with the next
// fetch answer). With the writer's word (the offset after its batch and that batch's leader
// epoch) the node replays it at once, and only when its own batch there is the writer's: a batch
// of another epoch at those offsets (a stale suffix not yet truncated) waits for the high watermark.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeRegistryRecord, RegistryService, type RegistryRecord, type SchemasLog } from '../../src/registry/index.js';
import { buildRecordBatchSync, iterateBatches } from '../../src/records/index.js';
import { ManualClock, type Logger } from '../../src/util/index.js';

const quiet: Logger = { error() {}, warn() {}, info() {} };

/** A replica of `_schemas`-0 whose batches and high watermark the test sets. */
class FakeReplica implements SchemasLog {
  batches: Buffer[] = [];
  hw = 0;
  hasReplica() { return true; }
  isLeader() { return false; }
  leaderId() { return 1; }
  highWatermark() { return this.hw; }
  logEndOffset() { return this.batches.reduce((end, b) => Math.max(end, [...iterateBatches(b)][0]!.lastOffset + 1), 0); }
  logStartOffset() { return 0; }
  endOffsetForEpoch(epoch: number) {
    const views = this.batches.map((b) => [...iterateBatches(b)][0]!);
    if (!views.some((v) => v.partitionLeaderEpoch <= epoch)) return -1;
    return views.find((v) => v.partitionLeaderEpoch > epoch)?.baseOffset ?? this.logEndOffset();
  }
  async read(offset: number, maxOffset: number) {
    return Buffer.concat(this.batches.filter((b) => { const v = [...iterateBatches(b)][0]!; return v.lastOffset >= offset && v.baseOffset < maxOffset; }));
  }
  async append(): Promise<{ errorCode: number; baseOffset: number }> { throw new Error('a follower does not append'); }
  async ensureTopic() { return 0; }
  /** Appends a batch of `records` at the end, written in leader epoch `epoch`; the offset after it. */
  add(epoch: number, records: RegistryRecord[]): number {
    const baseOffset = this.logEndOffset();
    this.batches.push(buildRecordBatchSync({ baseOffset, partitionLeaderEpoch: epoch, records: records.map((r) => encodeRegistryRecord(r)), baseTimestamp: 0 }));
    return baseOffset + records.length;
  }
  /** Drops every batch from `offset` on (a follower's truncation). */
  truncate(offset: number) { this.batches = this.batches.filter((b) => [...iterateBatches(b)][0]!.baseOffset < offset); }
}

const schema = (subject: string, id: number): RegistryRecord => ({
  keytype: 'SCHEMA', subject, version: 1, value: { subject, version: 1, id, schemaType: 'AVRO', schema: '"string"', references: [], deleted: false },
});

/** A started service replaying `log` (polling every `pollMs`), closed after `fn` whatever happens. */
async function withService(pollMs: number, fn: (log: FakeReplica, service: RegistryService) => Promise<void>): Promise<void> {
  const log = new FakeReplica();
  const service = new RegistryService({ log, clock: new ManualClock(0), logger: quiet, pollMs });
  service.start();
  try {
    await fn(log, service);
  } finally {
    service.close();
  }
}

test('a forwarding node replays the writer\'s batch past its high watermark when offset and epoch match', { timeout: 30_000 }, () => withService(60_000, async (log, service) => {
  log.add(3, [schema('a', 1)]);
  log.hw = 1;
  assert.ok(await service.waitForOffset(1, 5_000));
  const end = log.add(3, [schema('b', 2)]);
  // The high watermark stays at 1, and the poll interval is a minute: only the writer's word can move the replay.
  assert.ok(await service.waitForOffset(end, 5_000, 3), 'the writer\'s batch is replayed before the high watermark reaches it');
  assert.equal(service.state.schemaById(2).schema, '"string"');
  assert.deepEqual(service.replayedPosition, { offset: 2, epoch: 3 });
}));

test('a batch of another epoch at the writer\'s offsets is not replayed until the high watermark passes the real one', { timeout: 30_000 }, () => withService(50, async (log, service) => {
  log.add(3, [schema('a', 1)]);
  log.hw = 1;
  assert.ok(await service.waitForOffset(1, 5_000));
  // This replica still holds what an old leader of epoch 3 wrote at offset 1; the writer (epoch 4) committed another record there.
  log.add(3, [schema('stale', 7)]);
  assert.equal(await service.waitForOffset(2, 500, 4), false, 'a stale batch must not be replayed on the writer\'s word');
  assert.throws(() => service.state.schemaById(7), /not found/);
  // The next fetch truncates the stale suffix, brings the writer's batch and the high watermark.
  log.truncate(1);
  log.add(4, [schema('b', 2)]);
  log.hw = 2;
  assert.ok(await service.waitForOffset(2, 5_000, 4));
  assert.equal(service.state.schemaById(2).schema, '"string"');
  assert.throws(() => service.state.schemaById(7), /not found/);
}));

test('the writer\'s word for offsets this replica has not fetched yet waits for them', { timeout: 30_000 }, () => withService(20, async (log, service) => {
  const waiting = service.waitForOffset(1, 10_000, 5);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(service.replayedOffset, 0);
  log.add(5, [schema('a', 1)]);
  assert.ok(await waiting, 'replayed once the batch arrives, with the high watermark still at 0');
  assert.equal(log.hw, 0);
}));

test('a replica cut below what was replayed and written on in a later epoch (an unclean election) is replayed again from its start', { timeout: 30_000 }, () => withService(20, async (log, service) => {
  log.add(3, [schema('a', 1)]);
  log.add(3, [schema('lost', 2)]);
  log.hw = 2;
  assert.ok(await service.waitForOffset(2, 5_000));
  assert.equal(service.state.schemaById(2).schema, '"string"');
  // The replica that led next had only offset 0: this one truncates to 1, and fetches what the new
  // leader wrote there in epoch 5, and more, before the registry polls again.
  log.truncate(1);
  log.add(5, [{ ...schema('b', 3), value: { ...schema('b', 3).value!, schema: '"int"' } } as RegistryRecord]);
  log.add(5, [schema('c', 4)]);
  log.hw = 3;
  assert.ok(await service.waitForOffset(3, 5_000));
  assert.throws(() => service.state.schemaById(2), /not found/, 'the record the log no longer holds is forgotten');
  assert.equal(service.state.schemaById(3).schema, '"int"');
  assert.equal(service.state.schemaById(4).schema, '"string"');
  assert.deepEqual(service.replayedPosition, { offset: 3, epoch: 5 });
}));

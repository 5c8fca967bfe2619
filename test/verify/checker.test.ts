// The checker against histories written by hand, each with one planted anomaly of a class the Kafka
// analyses name, and against histories of a correct Kafka generated from seeds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { check, HistoryRecorder, type AnomalyName, type CheckReport, type History, type PartitionRead, type Send } from '../../src/verify/index.js';
import { cleanHistory } from './clean-history.js';

/** A tiny history builder: each call is one operation, invoked and completed at once. */
function builder() {
  let t = 0;
  const h = new HistoryRecorder(() => t++);
  const send = (process: number, partition: string, value: string, offset: number | null, type: 'ok' | 'fail' | 'info' = 'ok') => {
    const s: Send = { f: 'send', partition, key: null, value, offset: null };
    h.complete(h.invoke(process, 'send', { mops: [s] }), type, { mops: [{ ...s, offset }] });
  };
  const poll = (process: number, reads: Record<string, [number, string][]>) => {
    const r: PartitionRead[] = Object.entries(reads).map(([partition, records]) => ({ partition, records }));
    h.complete(h.invoke(process, 'poll'), 'ok', { mops: [{ f: 'poll', isolation: 'read_committed', reads: r }] });
  };
  const txn = (process: number, type: 'ok' | 'fail', reads: Record<string, [number, string][]>, writes: [partition: string, value: string, offset: number][]) => {
    const r: PartitionRead[] = Object.entries(reads).map(([partition, records]) => ({ partition, records }));
    const sends: Send[] = writes.map(([partition, value, offset]) => ({ f: 'send', partition, key: null, value, offset }));
    h.complete(h.invoke(process, 'txn'), type, { mops: [{ f: 'poll', isolation: 'read_committed', reads: r }, ...sends] });
  };
  const assign = (process: number, partitions: string[]) => h.complete(h.invoke(process, 'assign', { partitions }), 'ok', { partitions });
  const final = (reads: Record<string, [number, string][]>, ends: Record<string, number>) => {
    const r: PartitionRead[] = Object.entries(reads).map(([partition, records]) => ({ partition, records, endOffset: ends[partition]! }));
    h.complete(h.invoke(-2, 'final'), 'ok', { mops: [{ f: 'poll', isolation: 'read_committed', reads: r }] });
  };
  return { h, send, poll, txn, assign, final };
}

/** The classes found are exactly `names` (an anomaly often shows in more than one class). */
function only(report: CheckReport, ...names: AnomalyName[]): void {
  const found = report.classes.filter((c) => c.count > 0).map((c) => c.name);
  assert.deepEqual(found, names, JSON.stringify(report.classes.filter((c) => c.count > 0), null, 1));
}

test('a clean history: nothing found, every class none', () => {
  const b = builder();
  b.send(0, 't-0', 'a', 0);
  b.send(0, 't-0', 'b', 1);
  b.poll(1, { 't-0': [[0, 'a'], [1, 'b']] });
  b.final({ 't-0': [[0, 'a'], [1, 'b']] }, { 't-0': 2 });
  const r = check(b.h.ops);
  assert.equal(r.valid, true);
  assert.ok(r.classes.every((c) => c.verdict === 'none'));
  assert.deepEqual(r.stats.sends, { ok: 2, fail: 0, info: 0 });
  assert.equal(r.unseen.count, 0);
});

test('lost write: an acknowledged send the final read went past and did not return', () => {
  const b = builder();
  b.send(0, 't-0', 'a', 0);
  b.send(0, 't-0', 'b', 1);
  b.send(0, 't-0', 'c', 2);
  b.final({ 't-0': [[0, 'a'], [2, 'c']] }, { 't-0': 3 });
  const r = check(b.h.ops);
  // The final read jumped over offset 1, which an acknowledgement says holds b: a skip as well.
  only(r, 'lost-write', 'poll-skip');
  assert.equal(r.valid, false);
  assert.deepEqual(r.classes.find((c) => c.name === 'lost-write')!.examples, [{ partition: 't-0', value: 'b', offset: 1, writer: 3, maxReadOffset: 2, finalEndOffset: 3 }]);
});

test('lost write by a consumer alone: it read past the acknowledged offset; without a reader past it, the send is only unseen', () => {
  const b = builder();
  b.send(0, 't-0', 'a', 0);
  b.send(0, 't-0', 'b', 1);
  b.send(0, 't-1', 'x', 0);
  b.poll(1, { 't-0': [[1, 'b']] });
  const r = check(b.h.ops);
  only(r, 'lost-write');
  assert.equal(r.unseen.count, 1, 'x in t-1: nobody read t-1 at all');
});

test('a send with an unknown outcome (info) that nobody read is not lost', () => {
  const b = builder();
  b.send(0, 't-0', 'a', null, 'info');
  b.send(0, 't-0', 'b', 0);
  b.final({ 't-0': [[0, 'b']] }, { 't-0': 1 });
  assert.equal(check(b.h.ops).valid, true);
});

test('duplicate: one value at two offsets', () => {
  const b = builder();
  b.send(0, 't-0', 'a', 0);
  b.send(0, 't-0', 'b', 1);
  b.final({ 't-0': [[0, 'a'], [1, 'b'], [2, 'a']] }, { 't-0': 3 });
  const r = check(b.h.ops);
  // a before b before a: the two sends also order each other both ways (a write cycle, allowed).
  only(r, 'duplicate', 'G0');
  assert.deepEqual(r.classes.find((c) => c.name === 'duplicate')!.examples, [{ value: 'a', at: ['t-0@0', 't-0@2'], writer: 1 }]);
});

test('aborted read: a read_committed poll returns a value of an aborted transaction', () => {
  const b = builder();
  b.txn(0, 'fail', {}, [['t-0', 'x', 0]]);
  b.send(1, 't-0', 'a', 2);
  b.poll(2, { 't-0': [[0, 'x'], [2, 'a']] });
  const r = check(b.h.ops);
  only(r, 'aborted-read');
});

test('nonmonotonic poll: offsets go back without an assignment, and a repeat counts; after an assignment they may', () => {
  const b = builder();
  for (let i = 0; i < 4; i++) b.send(0, 't-0', `v${i}`, i);
  b.poll(1, { 't-0': [[0, 'v0'], [1, 'v1'], [2, 'v2']] });
  b.poll(1, { 't-0': [[1, 'v1']] });
  const r = check(b.h.ops);
  only(r, 'nonmonotonic-poll');
  assert.deepEqual(r.classes.find((c) => c.name === 'nonmonotonic-poll')!.examples, [{ process: 1, partition: 't-0', from: 2, to: 1, ops: [9, 11] }]);

  const ok = builder();
  for (let i = 0; i < 4; i++) ok.send(0, 't-0', `v${i}`, i);
  ok.poll(1, { 't-0': [[0, 'v0'], [1, 'v1'], [2, 'v2']] });
  ok.assign(1, ['t-0']);
  ok.poll(1, { 't-0': [[1, 'v1'], [2, 'v2'], [3, 'v3']] });
  assert.equal(check(ok.h.ops).valid, true);
});

test('poll skip: a consumer jumps over a committed record; gaps of markers and aborted records are no skip', () => {
  const b = builder();
  b.send(0, 't-0', 'a', 0);
  b.send(0, 't-0', 'b', 1);
  b.send(0, 't-0', 'c', 2);
  b.poll(1, { 't-0': [[0, 'a']] });
  b.poll(1, { 't-0': [[2, 'c']] });
  b.poll(2, { 't-0': [[0, 'a'], [1, 'b'], [2, 'c']] }); // b is there: another consumer read it
  const r = check(b.h.ops);
  only(r, 'poll-skip');
  assert.deepEqual((r.classes.find((c) => c.name === 'poll-skip')!.examples[0] as { skipped: number[] }).skipped, [1]);

  const ok = builder();
  ok.send(0, 't-0', 'a', 0);
  ok.txn(2, 'fail', {}, [['t-0', 'x', 1]]); // offset 1 aborted, 2 its marker
  ok.send(0, 't-0', 'c', 3);
  ok.poll(1, { 't-0': [[0, 'a'], [3, 'c']] });
  ok.final({ 't-0': [[0, 'a'], [3, 'c']] }, { 't-0': 4 });
  assert.equal(check(ok.h.ops).valid, true);
});

test('inconsistent offsets: an acknowledgement and a poll disagree about the value at an offset', () => {
  const b = builder();
  b.send(0, 't-0', 'a', 0);
  b.send(1, 't-0', 'b', 0);
  b.poll(2, { 't-0': [[0, 'a']] });
  const r = check(b.h.ops);
  // b was acknowledged at 0 where a is: an inconsistent offset; and b, never read though a reader got to 0, is not lost (0 is not past 0).
  only(r, 'inconsistent-offset');
  assert.equal(r.unseen.count, 1);
});

test('G0: two committed transactions write two partitions in opposite orders (reported, allowed by Kafka)', () => {
  const b = builder();
  b.txn(0, 'ok', {}, [['t-0', 'a1', 0], ['t-1', 'a2', 1]]);
  b.txn(1, 'ok', {}, [['t-0', 'b1', 1], ['t-1', 'b2', 0]]);
  b.final({ 't-0': [[0, 'a1'], [1, 'b1']], 't-1': [[0, 'b2'], [1, 'a2']] }, { 't-0': 2, 't-1': 2 });
  const r = check(b.h.ops);
  only(r, 'G0');
  const g0 = r.classes.find((c) => c.name === 'G0')!;
  assert.equal(g0.verdict, 'allowed');
  assert.equal(r.valid, true);
  assert.deepEqual((g0.examples[0] as { cycle: { op: number; then: string }[] }).cycle.map((s) => [s.op, s.then]), [[1, 'ww'], [3, 'ww']]);
});

test('G1c: each of two transactions reads what the other wrote (circular information flow)', () => {
  const b = builder();
  // T1 reads b1 (T2's write) and writes a1; T2 reads a1 (T1's write) and writes b1.
  b.txn(0, 'ok', { 't-1': [[0, 'b1']] }, [['t-0', 'a1', 0]]);
  b.txn(1, 'ok', { 't-0': [[0, 'a1']] }, [['t-1', 'b1', 0]]);
  b.final({ 't-0': [[0, 'a1']], 't-1': [[0, 'b1']] }, { 't-0': 1, 't-1': 1 });
  const r = check(b.h.ops);
  only(r, 'G1c');
  assert.equal(r.valid, false);
  const cycle = (r.classes.find((c) => c.name === 'G1c')!.examples[0] as { cycle: { op: number; then: string }[] }).cycle;
  assert.deepEqual(cycle.map((s) => s.then), ['wr', 'wr']);
});

test('G1c with a write-write edge: T2 read T1\'s write, yet T2 wrote before T1 in another partition', () => {
  const b = builder();
  b.txn(0, 'ok', {}, [['t-0', 'a0', 0], ['t-1', 'a1', 1]]);
  b.txn(1, 'ok', { 't-0': [[0, 'a0']] }, [['t-1', 'b1', 0]]);
  b.final({ 't-0': [[0, 'a0']], 't-1': [[0, 'b1'], [1, 'a1']] }, { 't-0': 1, 't-1': 2 });
  const r = check(b.h.ops);
  only(r, 'G1c');
  const cycle = (r.classes.find((c) => c.name === 'G1c')!.examples[0] as { cycle: { op: number; then: string }[] }).cycle;
  assert.deepEqual(cycle.map((s) => s.then).sort(), ['wr', 'ww']);
});

test('examples are capped; counts are not', () => {
  const b = builder();
  const finalRecords: [number, string][] = [];
  for (let i = 0; i < 20; i++) b.send(0, 't-0', `v${i}`, i);
  finalRecords.push([19, 'v19']);
  b.final({ 't-0': finalRecords }, { 't-0': 20 });
  const r = check(b.h.ops, { examplesMax: 3 });
  const lost = r.classes.find((c) => c.name === 'lost-write')!;
  assert.deepEqual([lost.count, lost.examples.length], [19, 3]);
});

test('histories of a correct Kafka, from any seed, have no anomaly of any class', () => {
  fc.assert(fc.property(fc.integer(), fc.integer({ min: 1, max: 300 }), (seed, steps) => {
    const history: History = cleanHistory(seed, { steps });
    const r = check(history);
    const found = r.classes.filter((c) => c.count > 0);
    assert.deepEqual(found, [], `seed ${seed}, ${steps} steps`);
    assert.equal(r.unseen.count, 0, 'the final read covers every partition');
  }), { numRuns: 300 });
});

test('a planted lost write in a generated history is found, whatever the seed', () => {
  fc.assert(fc.property(fc.integer(), (seed) => {
    const history = cleanHistory(seed, { steps: 150 });
    // Take one value the final read returned and that some ok send wrote, and drop it from every read.
    const final = history[history.length - 1]!;
    const okValues = new Set(history.filter((op) => op.type === 'ok' && op.f === 'send').flatMap((op) => op.mops!.map((m) => (m as Send).value)));
    const victim = (final.mops![0] as { reads: PartitionRead[] }).reads.flatMap((r) => r.records).map(([, v]) => v).find((v) => okValues.has(v));
    fc.pre(victim !== undefined);
    for (const op of history) {
      for (const m of op.mops ?? []) if (m.f === 'poll') for (const r of m.reads) r.records = r.records.filter(([, v]) => v !== victim);
    }
    const r = check(history);
    const lost = r.classes.find((c) => c.name === 'lost-write')!;
    assert.equal(lost.count, 1, `seed ${seed}`);
    assert.equal((lost.examples[0] as { value: string }).value, victim);
  }), { numRuns: 100 });
});

// ---- Consumer groups: a new owner resumes at the group's committed offset ----------------------

/** A group's members: a commit and an assignment with the positions resumed at, as the group workload records them. */
function groupOps(b: ReturnType<typeof builder>) {
  const commit = (process: number, positions: Record<string, number>, type: 'ok' | 'fail' | 'info' = 'ok') =>
    b.h.complete(b.h.invoke(process, 'commit', { group: 'g', positions }), type, { group: 'g', positions });
  const resume = (process: number, partitions: string[], positions: Record<string, number>) =>
    b.h.complete(b.h.invoke(process, 'assign', { group: 'g', partitions }), 'ok', { group: 'g', partitions, positions });
  return { commit, resume };
}

test('group: a partition handed from one member to the next at the committed offset is clean', () => {
  const b = builder();
  const g = groupOps(b);
  for (let i = 0; i < 4; i++) b.send(0, 't-0', `v${i}`, i);
  g.resume(1, ['t-0'], { 't-0': 0 });
  b.poll(1, { 't-0': [[0, 'v0'], [1, 'v1']] });
  g.commit(1, { 't-0': 2 });
  g.resume(1, [], {});
  g.resume(2, ['t-0'], { 't-0': 2 });
  b.poll(2, { 't-0': [[2, 'v2'], [3, 'v3']] });
  b.final({ 't-0': [[0, 'v0'], [1, 'v1'], [2, 'v2'], [3, 'v3']] }, { 't-0': 4 });
  only(check(b.h.ops));
});

test('group: a new owner that resumes past the committed offset skips records nobody consumed (poll-skip)', () => {
  const b = builder();
  const g = groupOps(b);
  for (let i = 0; i < 5; i++) b.send(0, 't-0', `v${i}`, i);
  g.resume(1, ['t-0'], { 't-0': 0 });
  b.poll(1, { 't-0': [[0, 'v0'], [1, 'v1']] });
  g.commit(1, { 't-0': 2 });
  g.commit(1, { 't-0': 9 }, 'fail'); // refused: it cannot explain where the next owner starts
  g.resume(2, ['t-0'], { 't-0': 4 });
  b.poll(2, { 't-0': [[4, 'v4']] });
  b.final({ 't-0': [[0, 'v0'], [1, 'v1'], [2, 'v2'], [3, 'v3'], [4, 'v4']] }, { 't-0': 5 });
  const r = check(b.h.ops);
  only(r, 'poll-skip');
  assert.deepEqual((r.classes.find((c) => c.name === 'poll-skip')!.examples[0] as { skipped: number[] }).skipped, [2, 3]);
});

test('group: a commit whose answer was lost may explain a later resume; one certainly made cannot be gone back past (nonmonotonic)', () => {
  const b = builder();
  const g = groupOps(b);
  for (let i = 0; i < 5; i++) b.send(0, 't-0', `v${i}`, i);
  g.resume(1, ['t-0'], { 't-0': 0 });
  b.poll(1, { 't-0': [[0, 'v0'], [1, 'v1'], [2, 'v2'], [3, 'v3']] });
  g.commit(1, { 't-0': 4 }, 'info');
  g.resume(2, ['t-0'], { 't-0': 4 }); // the unknown commit happened: fine
  b.poll(2, { 't-0': [[4, 'v4']] });
  g.commit(2, { 't-0': 5 });
  b.final({ 't-0': [[0, 'v0'], [1, 'v1'], [2, 'v2'], [3, 'v3'], [4, 'v4']] }, { 't-0': 5 });
  only(check(b.h.ops));
  g.resume(3, ['t-0'], { 't-0': 1 }); // the group had committed 5: going back to 1 re-delivers what it consumed
  b.poll(3, { 't-0': [[1, 'v1']] });
  const r = check(b.h.ops);
  only(r, 'nonmonotonic-poll');
  assert.equal((r.classes.find((c) => c.name === 'nonmonotonic-poll')!.examples[0] as { committed: number }).committed, 5);
});

test('an assignment\'s positions start the member\'s order: reading below the position resumed at, or past a record after it, is caught', () => {
  const b = builder();
  for (let i = 0; i < 4; i++) b.send(0, 't-0', `v${i}`, i);
  b.h.complete(b.h.invoke(1, 'assign', { partitions: ['t-0'] }), 'ok', { partitions: ['t-0'], positions: { 't-0': 2 } });
  b.poll(1, { 't-0': [[3, 'v3']] });
  b.final({ 't-0': [[0, 'v0'], [1, 'v1'], [2, 'v2'], [3, 'v3']] }, { 't-0': 4 });
  only(check(b.h.ops), 'poll-skip');
  const c = builder();
  for (let i = 0; i < 4; i++) c.send(0, 't-0', `v${i}`, i);
  c.h.complete(c.h.invoke(1, 'assign', { partitions: ['t-0'] }), 'ok', { partitions: ['t-0'], positions: { 't-0': 2 } });
  c.poll(1, { 't-0': [[1, 'v1'], [2, 'v2']] });
  c.final({ 't-0': [[0, 'v0'], [1, 'v1'], [2, 'v2'], [3, 'v3']] }, { 't-0': 4 });
  only(check(c.h.ops), 'nonmonotonic-poll');
});

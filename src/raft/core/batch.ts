// Entry batches: the unit in which the core keeps, persists and replicates its log. One batch is a
// run of consecutive entries with one epoch and one kind, held as one byte buffer with the value
// bounds in one Int32Array; offsets are implied (baseOffset + index). A log of 1,000-record
// proposals is then a few objects per proposal rather than two per record, which is what young-
// generation garbage collection pays for (every object the log keeps is copied by the scavenges
// until it is promoted). `Entry` objects are made only on demand (applying, tests, the simulator).
import { assert } from '../../util/index.js';
import type { Entry, EntryBatch, EntryKind } from './types.js';

export function lastOffsetOf(b: EntryBatch): number { return b.baseOffset + b.count - 1; }
export function endOffsetOf(b: EntryBatch): number { return b.baseOffset + b.count; }

/** The value of entry `i` (a view into the batch's bytes). */
export function batchValue(b: EntryBatch, i: number): Uint8Array {
  return b.bytes.subarray(b.bounds[2 * i]!, b.bounds[2 * i + 1]!);
}

export function batchEntry(b: EntryBatch, i: number): Entry {
  return { offset: b.baseOffset + i, epoch: b.epoch, kind: b.kind, value: batchValue(b, i) };
}

export function entriesOf(batches: readonly EntryBatch[]): Entry[] {
  const out: Entry[] = [];
  for (const b of batches) for (let i = 0; i < b.count; i++) out.push(batchEntry(b, i));
  return out;
}

export function countEntries(batches: readonly EntryBatch[]): number {
  let n = 0;
  for (const b of batches) n += b.count;
  return n;
}

/**
 * One batch of `values` at `baseOffset`. Values that already lie back to back in one buffer (as a
 * node's proposal line is decoded) are kept there; otherwise they are copied into one buffer.
 */
export function makeBatch(baseOffset: number, epoch: number, kind: EntryKind, values: readonly Uint8Array[]): EntryBatch {
  assert(values.length > 0, 'a batch holds at least one entry');
  const bounds = new Int32Array(2 * values.length);
  const first = values[0]!;
  let contiguous = true;
  let total = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v.buffer !== first.buffer || v.byteOffset !== first.byteOffset + total) contiguous = false;
    total += v.length;
  }
  let bytes: Uint8Array;
  if (contiguous) {
    bytes = new Uint8Array(first.buffer, first.byteOffset, total);
  } else {
    bytes = new Uint8Array(total);
    let at = 0;
    for (const v of values) { bytes.set(v, at); at += v.length; }
  }
  let at = 0;
  for (let i = 0; i < values.length; i++) {
    bounds[2 * i] = at;
    at += values[i]!.length;
    bounds[2 * i + 1] = at;
  }
  return { baseOffset, epoch, kind, count: values.length, bytes, bounds, recordBatch: false };
}

/** Entries [from, to) of `b` by offset; `b` itself when that is all of it. */
export function sliceBatch(b: EntryBatch, from: number, to: number): EntryBatch {
  const lo = Math.max(from, b.baseOffset) - b.baseOffset;
  const hi = Math.min(to, endOffsetOf(b)) - b.baseOffset;
  assert(lo < hi, `empty slice [${from}, ${to}) of batch ${b.baseOffset}+${b.count}`);
  if (lo === 0 && hi === b.count) return b;
  return {
    baseOffset: b.baseOffset + lo, epoch: b.epoch, kind: b.kind, count: hi - lo, bytes: b.bytes,
    bounds: b.bounds.subarray(2 * lo, 2 * hi), recordBatch: false,
  };
}

/** Splits entries into batches: one per run of consecutive offsets with the same epoch and kind. */
export function batchesOf(entries: readonly Entry[]): EntryBatch[] {
  const out: EntryBatch[] = [];
  let start = 0;
  for (let i = 1; i <= entries.length; i++) {
    const a = entries[start]!;
    const b = entries[i];
    if (b !== undefined && b.epoch === a.epoch && b.kind === a.kind && b.offset === entries[i - 1]!.offset + 1) continue;
    out.push(makeBatch(a.offset, a.epoch, a.kind, entries.slice(start, i).map((e) => e.value)));
    start = i;
  }
  return out;
}

/** A copy that pins nothing but its own bytes (a batch decoded from a large read buffer, say). */
export function copyBatch(b: EntryBatch): EntryBatch {
  return { ...b, bytes: new Uint8Array(b.bytes), bounds: new Int32Array(b.bounds) };
}

// Two small replicated state machines for the runnable node, its tests and the bench: an append
// list that keeps every committed value with its offset (what a test compares across nodes), and a
// counter that keeps only totals (bounded memory under a long bench). Both are deterministic.
import { assert } from '../../util/index.js';
import type { Entry, EntryBatch, Snapshot } from '../core/types.js';
import type { ReplicatedStateMachine } from '../state-machine.js';

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** Every committed value, as (offset, utf-8 text). */
export class AppendListStateMachine implements ReplicatedStateMachine {
  offsets: number[] = [];
  values: string[] = [];

  apply(entries: readonly Entry[]): void {
    for (const e of entries) {
      const last = this.offsets.length === 0 ? -1 : this.offsets[this.offsets.length - 1]!;
      assert(e.offset > last, `applied offset ${e.offset} after ${last}`);
      this.offsets.push(e.offset);
      this.values.push(decoder.decode(e.value));
    }
  }

  snapshot(): Uint8Array {
    return encoder.encode(JSON.stringify({ offsets: this.offsets, values: this.values }));
  }

  restore(snapshot: Snapshot): void {
    if (snapshot.data.length === 0) { this.offsets = []; this.values = []; return; }
    const s = JSON.parse(decoder.decode(snapshot.data)) as { offsets: number[]; values: string[] };
    assert(s.offsets.length === s.values.length, 'snapshot offsets and values differ in length');
    this.offsets = s.offsets;
    this.values = s.values;
  }

  /** Entries with offset >= `from`, at most `max`. */
  read(from: number, max: number): Array<[number, string]> {
    let lo = 0;
    let hi = this.offsets.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.offsets[mid]! < from) lo = mid + 1;
      else hi = mid;
    }
    const out: Array<[number, string]> = [];
    for (let i = lo; i < this.offsets.length && out.length < max; i++) out.push([this.offsets[i]!, this.values[i]!]);
    return out;
  }
}

/** How many values and bytes were committed, and the last offset. */
export class CounterStateMachine implements ReplicatedStateMachine {
  count = 0;
  bytes = 0;
  lastOffset = -1;

  apply(entries: readonly Entry[]): void {
    for (const e of entries) {
      assert(e.offset > this.lastOffset, `applied offset ${e.offset} after ${this.lastOffset}`);
      this.count++;
      this.bytes += e.value.length;
      this.lastOffset = e.offset;
    }
  }

  applyBatches(batches: readonly EntryBatch[]): void {
    for (const b of batches) {
      assert(b.baseOffset > this.lastOffset, `applied offset ${b.baseOffset} after ${this.lastOffset}`);
      this.count += b.count;
      for (let i = 0; i < b.count; i++) this.bytes += b.bounds[2 * i + 1]! - b.bounds[2 * i]!;
      this.lastOffset = b.baseOffset + b.count - 1;
    }
  }

  snapshot(): Uint8Array {
    return encoder.encode(JSON.stringify({ count: this.count, bytes: this.bytes, lastOffset: this.lastOffset }));
  }

  restore(snapshot: Snapshot): void {
    const s = snapshot.data.length === 0 ? { count: 0, bytes: 0, lastOffset: -1 }
      : JSON.parse(decoder.decode(snapshot.data)) as { count: number; bytes: number; lastOffset: number };
    this.count = s.count;
    this.bytes = s.bytes;
    this.lastOffset = s.lastOffset;
  }
}

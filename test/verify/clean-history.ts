// Histories of a correct Kafka, generated from a seed: a model of partitions as arrays, idempotent
// sends (some refused, some unknown), transactions that poll and then append atomically and commit
// or abort (with a control marker after each partition's records, so offsets have gaps), consumers
// that read committed records in order and are sometimes reassigned, and a final read. Whatever the
// seed, the checker must find nothing in them.
import { HistoryRecorder, NEMESIS, type History, type Op, type PartitionRead, type Send } from '../../src/verify/index.js';
import { Prng } from '../../src/util/index.js';

interface Entry { value: string | null; state: 'committed' | 'aborted' | 'control' }

export interface CleanHistoryOptions { steps: number; partitions?: number; processes?: number }

export function cleanHistory(seed: number, options: CleanHistoryOptions): History {
  const prng = new Prng(seed);
  let time = 0;
  const h = new HistoryRecorder(() => time++);
  const names = Array.from({ length: options.partitions ?? 3 }, (_, i) => `t-${i}`);
  const logs = new Map<string, Entry[]>(names.map((n) => [n, []]));
  const processes = options.processes ?? 4;
  const positions = new Map<number, Map<string, number>>();
  let next = 0;
  const pick = <T>(xs: readonly T[]): T => xs[prng.int(xs.length)]!;
  const visibleFrom = (p: string, from: number, max: number): [number, string][] => {
    const out: [number, string][] = [];
    const log = logs.get(p)!;
    for (let o = from; o < log.length && out.length < max; o++) if (log[o]!.state === 'committed') out.push([o, log[o]!.value!]);
    return out;
  };
  const poll = (process: number): PartitionRead[] => {
    const pos = positions.get(process) ?? new Map(names.map((n) => [n, 0]));
    positions.set(process, pos);
    const reads: PartitionRead[] = [];
    for (const [p, at] of pos) {
      const records = visibleFrom(p, at, 1 + prng.int(4));
      if (records.length > 0) { reads.push({ partition: p, records }); pos.set(p, records[records.length - 1]![0] + 1); }
    }
    return reads;
  };
  for (let step = 0; step < options.steps; step++) {
    const process = prng.int(processes);
    const roll = prng.next();
    if (roll < 0.4) {
      const send: Send = { f: 'send', partition: pick(names), key: null, value: `v${next++}`, offset: null };
      const inv = h.invoke(process, 'send', { mops: [send] });
      const outcome = prng.next();
      if (outcome < 0.8) {
        const log = logs.get(send.partition)!;
        log.push({ value: send.value, state: 'committed' });
        h.complete(inv, 'ok', { mops: [{ ...send, offset: log.length - 1 }] });
      } else if (outcome < 0.9) {
        h.complete(inv, 'fail', { mops: [send], error: 'NOT_ENOUGH_REPLICAS' });
      } else {
        // Unknown outcome: the record may or may not be in the log.
        if (prng.next() < 0.5) logs.get(send.partition)!.push({ value: send.value, state: 'committed' });
        h.complete(inv, 'info', { mops: [send], error: 'timeout' });
      }
    } else if (roll < 0.6) {
      const before = new Map(positions.get(process) ?? []);
      const reads = prng.next() < 0.5 ? poll(process) : [];
      const sends: Send[] = Array.from({ length: 1 + prng.int(3) }, () => ({ f: 'send', partition: pick(names), key: null, value: `v${next++}`, offset: null }));
      const inv = h.invoke(process, 'txn', { mops: [{ f: 'poll', isolation: 'read_committed', reads: [] }, ...sends] });
      const commit = prng.next() < 0.7;
      const done = sends.map((s) => {
        const log = logs.get(s.partition)!;
        log.push({ value: s.value, state: commit ? 'committed' : 'aborted' });
        return { ...s, offset: log.length - 1 };
      });
      for (const p of new Set(sends.map((s) => s.partition))) logs.get(p)!.push({ value: null, state: 'control' });
      h.complete(inv, commit ? 'ok' : 'fail', { mops: [{ f: 'poll', isolation: 'read_committed', reads }, ...done], ...(commit ? {} : { error: 'aborted' }) });
      if (!commit) {
        // The consumer seeks back to where the transaction started, as after an abort.
        positions.set(process, before);
        const a = h.invoke(process, 'assign', { partitions: names });
        h.complete(a, 'ok', { partitions: names });
      }
    } else if (roll < 0.9) {
      const inv = h.invoke(process, 'poll', { mops: [{ f: 'poll', isolation: 'read_committed', reads: [] }] });
      h.complete(inv, 'ok', { mops: [{ f: 'poll', isolation: 'read_committed', reads: poll(process) }] });
    } else if (roll < 0.97) {
      // A new assignment: positions anywhere at or below each partition's end.
      positions.set(process, new Map(names.map((n) => [n, prng.int(logs.get(n)!.length + 1)])));
      const a = h.invoke(process, 'assign', { partitions: names });
      h.complete(a, 'ok', { partitions: names });
    } else {
      const kind = prng.next() < 0.5 ? 'kill' : 'pause';
      const node = 1 + prng.int(3);
      h.complete(h.invoke(NEMESIS, kind, { node }), 'info', { node });
      h.complete(h.invoke(NEMESIS, kind === 'kill' ? 'restart' : 'resume', { node }), 'info', { node });
    }
  }
  finalRead(h, logs, names);
  return h.ops;
}

function finalRead(h: HistoryRecorder, logs: Map<string, Entry[]>, names: string[]): Op {
  const reads: PartitionRead[] = names.map((p) => {
    const log = logs.get(p)!;
    const records: [number, string][] = [];
    log.forEach((e, o) => { if (e.state === 'committed') records.push([o, e.value!]); });
    return { partition: p, records, endOffset: log.length };
  });
  const inv = h.invoke(-2, 'final', { mops: [{ f: 'poll', isolation: 'read_committed', reads: [] }] });
  return h.complete(inv, 'ok', { mops: [{ f: 'poll', isolation: 'read_committed', reads }] });
}

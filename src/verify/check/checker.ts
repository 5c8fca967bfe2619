// The checker: a pure function of a history that reports, per anomaly class of the published Kafka
// analyses (Jepsen's Kafka workload, its Redpanda and Bufstream reports), how many cases it found
// and a few examples. It trusts nothing the system said without a second witness: an offset is what
// acknowledgements and polls agree on, a write is lost only when some reader provably went past it.
//
// Values are unique per run (the workload never sends a value twice), so a value names its send.
import { DepGraph, type EdgeKind } from './graph.js';
import { pollsOf, sendsOf, type History, type Isolation, type Op, type Send } from './history.js';

export type AnomalyName = 'lost-write' | 'duplicate' | 'aborted-read' | 'nonmonotonic-poll' | 'poll-skip' | 'inconsistent-offset' | 'G0' | 'G1c';

/**
 * Every class, with what a case means. `allowed`: Kafka's transaction protocol permits it, so it is
 * reported but does not fail a run (Jepsen's Redpanda report: transactions that write the same
 * partitions may interleave their writes in different orders on different partitions).
 */
export const ANOMALY_CLASSES: readonly { name: AnomalyName; allowed: boolean; means: string }[] = [
  { name: 'lost-write', allowed: false, means: 'an acknowledged send that no reader saw, though a reader went past its offset or the final read covered it' },
  { name: 'duplicate', allowed: false, means: 'one sent value at more than one offset (the producers are idempotent)' },
  { name: 'aborted-read', allowed: false, means: 'a read_committed poll returned a value of an aborted transaction or a failed send' },
  { name: 'nonmonotonic-poll', allowed: false, means: 'a consumer\'s offsets in a partition went back or repeated without a new assignment, or a group member resumed below the group\'s committed offset' },
  { name: 'poll-skip', allowed: false, means: 'a consumer jumped over offsets that hold committed, visible records without a new assignment, or a group member resumed past them' },
  { name: 'inconsistent-offset', allowed: false, means: 'two different values at one offset of a partition (from acknowledgements or polls)' },
  { name: 'G0', allowed: true, means: 'a cycle of write-write dependencies between transactions (Kafka does not order concurrent transactions\' writes)' },
  { name: 'G1c', allowed: false, means: 'a cycle of write-write and write-read dependencies with at least one read (circular information flow)' },
];

export interface ClassReport {
  name: AnomalyName;
  count: number;
  /** none: not seen; anomaly: seen and fails the run; allowed: seen, permitted by Kafka's model. */
  verdict: 'none' | 'anomaly' | 'allowed';
  means: string;
  examples: unknown[];
}

export interface CheckStats {
  ops: number;
  sends: { ok: number; fail: number; info: number };
  txns: { ok: number; fail: number; info: number };
  polls: number;
  recordsRead: number;
  valuesRead: number;
  faults: number;
}

export interface CheckReport {
  /** No class with verdict `anomaly`. */
  valid: boolean;
  stats: CheckStats;
  classes: ClassReport[];
  /** Acknowledged sends nobody read and no reader went past: not proof of loss (informational). */
  unseen: { count: number; examples: unknown[] };
}

export interface CheckOptions { examplesMax?: number }

/** One thing known about an offset: a value acknowledged there, or read there. */
interface Seen { value: string; op: number; how: 'ack' | 'read'; isolation?: Isolation }

interface Writer { op: Op; send: Send }

/** What the whole history says, indexed once for all the checks. */
interface Facts {
  completions: Op[];
  writerOf: Map<string, Writer>;
  /** partition → offset → what was seen there. */
  log: Map<string, Map<number, Seen[]>>;
  /** value → first op that read it. */
  readBy: Map<string, number>;
  maxReadOffset: Map<string, number>;
  finalEndOffset: Map<string, number>;
}

function facts(history: History): Facts {
  const completions = history.filter((op) => op.type !== 'invoke');
  const writerOf = new Map<string, Writer>();
  const log = new Map<string, Map<number, Seen[]>>();
  const readBy = new Map<string, number>();
  const maxReadOffset = new Map<string, number>();
  const finalEndOffset = new Map<string, number>();
  const observe = (partition: string, offset: number, seen: Seen) => {
    let offsets = log.get(partition);
    if (!offsets) log.set(partition, offsets = new Map());
    const list = offsets.get(offset);
    if (list) list.push(seen);
    else offsets.set(offset, [seen]);
  };
  for (const op of completions) {
    for (const send of sendsOf(op)) {
      if (!writerOf.has(send.value)) writerOf.set(send.value, { op, send });
      if (send.offset !== null) observe(send.partition, send.offset, { value: send.value, op: op.index, how: 'ack' });
    }
    for (const poll of pollsOf(op)) {
      for (const read of poll.reads) {
        for (const [offset, value] of read.records) {
          observe(read.partition, offset, { value, op: op.index, how: 'read', isolation: poll.isolation });
          if (!readBy.has(value)) readBy.set(value, op.index);
          maxReadOffset.set(read.partition, Math.max(maxReadOffset.get(read.partition) ?? -1, offset));
        }
        if (op.f === 'final' && read.endOffset !== undefined) finalEndOffset.set(read.partition, Math.max(finalEndOffset.get(read.partition) ?? -1, read.endOffset));
      }
    }
  }
  return { completions, writerOf, log, readBy, maxReadOffset, finalEndOffset };
}

export function check(history: History, options: CheckOptions = {}): CheckReport {
  const examplesMax = options.examplesMax ?? 5;
  const f = facts(history);
  const found = new Map<AnomalyName, unknown[]>(ANOMALY_CLASSES.map((c) => [c.name, []]));
  const unseen: unknown[] = [];
  inconsistentOffsets(f, found.get('inconsistent-offset')!);
  duplicates(f, found.get('duplicate')!);
  abortedReads(f, found.get('aborted-read')!);
  lostWrites(f, found.get('lost-write')!, unseen);
  pollOrder(history, f, found.get('nonmonotonic-poll')!, found.get('poll-skip')!);
  groupResumes(history, f, found.get('nonmonotonic-poll')!, found.get('poll-skip')!);
  cycles(f, found.get('G0')!, found.get('G1c')!);
  const classes = ANOMALY_CLASSES.map((c): ClassReport => {
    const cases = found.get(c.name)!;
    return { name: c.name, count: cases.length, verdict: cases.length === 0 ? 'none' : c.allowed ? 'allowed' : 'anomaly', means: c.means, examples: cases.slice(0, examplesMax) };
  });
  return { valid: classes.every((c) => c.verdict !== 'anomaly'), stats: stats(history, f), classes, unseen: { count: unseen.length, examples: unseen.slice(0, examplesMax) } };
}

function stats(history: History, f: Facts): CheckStats {
  const tally = (kind: 'send' | 'txn') => {
    const t = { ok: 0, fail: 0, info: 0 };
    for (const op of f.completions) if (op.f === kind) t[op.type as 'ok' | 'fail' | 'info']++;
    return t;
  };
  let recordsRead = 0;
  for (const op of f.completions) for (const p of pollsOf(op)) for (const r of p.reads) recordsRead += r.records.length;
  return {
    ops: history.length, sends: tally('send'), txns: tally('txn'),
    polls: f.completions.filter((op) => op.f === 'poll' && op.type === 'ok').length,
    recordsRead, valuesRead: f.readBy.size,
    faults: history.filter((op) => op.process < 0 && op.type !== 'invoke' && op.f !== 'final').length,
  };
}

function inconsistentOffsets(f: Facts, out: unknown[]): void {
  for (const [partition, offsets] of f.log) {
    for (const [offset, seen] of [...offsets].sort((a, b) => a[0] - b[0])) {
      const values = [...new Set(seen.map((s) => s.value))];
      if (values.length < 2) continue;
      out.push({ partition, offset, values: values.map((value) => ({ value, seenBy: seen.filter((s) => s.value === value).map((s) => ({ op: s.op, how: s.how })) })) });
    }
  }
}

function duplicates(f: Facts, out: unknown[]): void {
  const places = new Map<string, Set<string>>();
  for (const [partition, offsets] of f.log) {
    for (const [offset, seen] of offsets) {
      for (const s of seen) {
        let set = places.get(s.value);
        if (!set) places.set(s.value, set = new Set());
        set.add(`${partition}@${offset}`);
      }
    }
  }
  for (const [value, at] of places) if (at.size > 1) out.push({ value, at: [...at].sort(), writer: f.writerOf.get(value)?.op.index ?? null });
}

function abortedReads(f: Facts, out: unknown[]): void {
  for (const [partition, offsets] of f.log) {
    for (const [offset, seen] of offsets) {
      for (const s of seen) {
        if (s.how !== 'read' || s.isolation !== 'read_committed') continue;
        const writer = f.writerOf.get(s.value);
        if (writer?.op.type === 'fail') out.push({ partition, offset, value: s.value, writer: writer.op.index, writerError: writer.op.error ?? null, reader: s.op });
      }
    }
  }
}

function lostWrites(f: Facts, out: unknown[], unseen: unknown[]): void {
  for (const { op, send } of f.writerOf.values()) {
    if (op.type !== 'ok' || f.readBy.has(send.value)) continue;
    const maxRead = f.maxReadOffset.get(send.partition) ?? -1;
    const finalEnd = f.finalEndOffset.get(send.partition);
    const readPast = send.offset !== null && maxRead > send.offset;
    const covered = finalEnd !== undefined && (send.offset === null || finalEnd > send.offset);
    const example = { partition: send.partition, value: send.value, offset: send.offset, writer: op.index, maxReadOffset: maxRead, finalEndOffset: finalEnd ?? null };
    (readPast || covered ? out : unseen).push(example);
  }
}

/** Offsets of each partition that hold a record every read_committed consumer must see. */
function visibleOffsets(f: Facts): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const [partition, offsets] of f.log) {
    const visible: number[] = [];
    for (const [offset, seen] of offsets) {
      const committed = seen.some((s) => {
        const writer = f.writerOf.get(s.value)?.op.type;
        return writer === 'ok' || (s.how === 'read' && s.isolation === 'read_committed' && writer !== 'fail');
      });
      if (committed) visible.push(offset);
    }
    out.set(partition, visible.sort((a, b) => a - b));
  }
  return out;
}

/** Index of the first element of sorted `xs` greater than `x`. */
function upperBound(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Each process's reads in order, per partition: the next offset read must be above the last one
 * (else nonmonotonic) with no visible record between them (else a skip). An assignment or a crash
 * starts the process's positions over, as Kafka consumers seek on a new assignment.
 */
function pollOrder(history: History, f: Facts, nonmonotonic: unknown[], skips: unknown[]): void {
  const visible = visibleOffsets(f);
  const last = new Map<number, Map<string, { offset: number; op: number }>>();
  for (const op of history) {
    if (op.type === 'invoke') continue;
    if (op.f === 'assign' && op.type === 'ok' && op.positions !== undefined) {
      // Kept partitions go on from where they were; new ones from the position resumed at (as if
      // the record before it had just been read, so reading below it or past a record is caught).
      const keep = new Set(op.partitions ?? []);
      const next = new Map([...(last.get(op.process) ?? [])].filter(([p]) => keep.has(p) && !(p in op.positions!)));
      for (const [p, position] of Object.entries(op.positions)) next.set(p, { offset: position - 1, op: op.index });
      last.set(op.process, next);
      continue;
    }
    if (op.f === 'assign' || op.f === 'crash') { last.delete(op.process); continue; }
    const polls = pollsOf(op);
    if (polls.length === 0) continue;
    let positions = last.get(op.process);
    if (!positions) last.set(op.process, positions = new Map());
    for (const poll of polls) {
      for (const read of poll.reads) {
        for (const [offset] of read.records) {
          const prev = positions.get(read.partition);
          positions.set(read.partition, { offset, op: op.index });
          if (prev === undefined) continue;
          const where = { process: op.process, partition: read.partition, from: prev.offset, to: offset, ops: [prev.op, op.index] };
          if (offset <= prev.offset) { nonmonotonic.push(where); continue; }
          const vs = visible.get(read.partition) ?? [];
          const first = upperBound(vs, prev.offset);
          const skipped = [];
          for (let i = first; i < vs.length && vs[i]! < offset && skipped.length < 10; i++) skipped.push(vs[i]!);
          if (skipped.length > 0) skips.push({ ...where, skipped });
        }
      }
    }
  }
}

/**
 * A consumer group's members resume where the group committed: a member given a partition (an
 * `assign` of the group with `positions`) must start at or after the highest offset the group had
 * certainly committed for it before the assignment began (else the group goes back: nonmonotonic),
 * and at or before the highest offset that could have been committed by the time it ended, unless
 * no visible record lies between (else the group skips records nobody consumed). Only groups whose
 * assignments name them (`group`) are checked: their workload records every commit.
 */
function groupResumes(history: History, f: Facts, nonmonotonic: unknown[], skips: unknown[]): void {
  const visible = visibleOffsets(f);
  const openAt = new Map<number, number>();
  interface Commit { offset: number; type: Op['type']; invoked: number; completed: number; op: number }
  const commits = new Map<string, Commit[]>(); // group, partition → commits
  for (const op of history) {
    if (op.type === 'invoke') { openAt.set(op.process, op.index); continue; }
    const invoked = openAt.get(op.process) ?? op.index;
    if (op.group === undefined || op.positions === undefined) continue;
    if (op.f === 'commit') {
      for (const [partition, offset] of Object.entries(op.positions)) {
        const key = `${op.group}\0${partition}`;
        const list = commits.get(key) ?? [];
        list.push({ offset, type: op.type, invoked, completed: op.index, op: op.index });
        commits.set(key, list);
      }
      continue;
    }
    if (op.f !== 'assign' || op.type !== 'ok') continue;
    for (const [partition, position] of Object.entries(op.positions)) {
      const list = commits.get(`${op.group}\0${partition}`) ?? [];
      let certain: Commit | null = null;
      let possible = 0;
      for (const c of list) {
        if (c.type === 'ok' && c.completed < invoked && (certain === null || c.offset > certain.offset)) certain = c;
        if (c.type !== 'fail' && c.invoked < op.index) possible = Math.max(possible, c.offset);
      }
      const where = { group: op.group, partition, process: op.process, assign: op.index, resumedAt: position };
      if (certain !== null && position < certain.offset) { nonmonotonic.push({ ...where, committed: certain.offset, commit: certain.op }); continue; }
      if (position <= possible) continue;
      const vs = visible.get(partition) ?? [];
      const skipped = [];
      for (let i = upperBound(vs, possible - 1); i < vs.length && vs[i]! < position && skipped.length < 10; i++) skipped.push(vs[i]!);
      if (skipped.length > 0) skips.push({ ...where, committedAtMost: possible, skipped });
    }
  }
}

/**
 * Adya's dependency graph over the operations that wrote (sends and transactions that were not
 * refused): ww from each writer to the next one in a partition's offset order, wr from the writer
 * of the last value a transaction polled in a partition to that transaction (Jepsen's rule: earlier
 * values are ordered before it by ww already). G0 is a cycle of ww edges; G1c a cycle with a wr edge.
 */
function cycles(f: Facts, g0: unknown[], g1c: unknown[]): void {
  const graph = new DepGraph();
  const byIndex = new Map(f.completions.map((op) => [op.index, op]));
  const writerInGraph = (value: string): Op | undefined => {
    const w = f.writerOf.get(value)?.op;
    return w && w.type !== 'fail' ? w : undefined;
  };
  for (const offsets of f.log.values()) {
    let prev: Op | undefined;
    for (const [, seen] of [...offsets].sort((a, b) => a[0] - b[0])) {
      const w = writerInGraph(seen[0]!.value);
      if (!w) continue;
      if (prev && prev !== w) graph.add(prev.index, w.index, 'ww');
      prev = w;
    }
  }
  for (const op of f.completions) {
    if (op.type === 'fail' || sendsOf(op).length === 0) continue; // a reader that writes nothing closes no cycle
    const highest = new Map<string, [number, string]>();
    for (const poll of pollsOf(op)) {
      for (const read of poll.reads) {
        for (const rec of read.records) if ((highest.get(read.partition)?.[0] ?? -1) < rec[0]) highest.set(read.partition, rec);
      }
    }
    for (const [, [, value]] of highest) {
      const w = writerInGraph(value);
      if (w && w !== op) graph.add(w.index, op.index, 'wr');
    }
  }
  const describe = (steps: { op: number; then: EdgeKind[] }[]) => steps.map((s) => {
    const op = byIndex.get(s.op)!;
    return { op: s.op, process: op.process, f: op.f, writes: [...new Set(sendsOf(op).map((x) => x.partition))].sort(), then: s.then.join('+') };
  });
  const ww = graph.only(['ww']);
  for (const component of ww.components()) {
    const within = new Set(component);
    const from = component[0]!;
    const to = [...ww.out.get(from)!.keys()].find((v) => within.has(v))!;
    g0.push({ ops: component.length, cycle: describe(ww.cycleThrough(from, to, within)!) });
  }
  for (const component of graph.components()) {
    const within = new Set(component);
    let example: ReturnType<typeof describe> | null = null;
    for (const v of component) {
      for (const [w, kinds] of graph.out.get(v)!) {
        if (example === null && within.has(w) && kinds.has('wr')) example = describe(graph.cycleThrough(v, w, within)!);
      }
    }
    if (example !== null) g1c.push({ ops: component.length, cycle: example });
  }
}

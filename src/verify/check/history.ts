// A history: what a workload's clients did and saw, as Jepsen records it. Every operation is an
// invocation followed by its completion from the same process: `ok` (it happened), `fail` (it
// certainly did not: a refused send, an aborted transaction) or `info` (unknown: a timeout, a lost
// connection). Operations are single-threaded per process, so a process has at most one operation
// open at a time. Faults are operations of the nemesis process. Partitions are named
// `topic-partition` (Kafka's own spelling), which is the "key" of Jepsen's Kafka workload.

export type OpType = 'invoke' | 'ok' | 'fail' | 'info';

/** A producer's send of one record; `offset` is what the acknowledgement said, null when there was none. */
export interface Send { f: 'send'; partition: string; key: string | null; value: string; offset: number | null }

/** The records one poll returned for one partition, in the order they came. */
export interface PartitionRead {
  partition: string;
  records: [offset: number, value: string][];
  /**
   * A final read only: it read every record below this offset (the partition's last stable offset
   * when it ended), so a committed value below it that it did not see is not in the log.
   */
  endOffset?: number;
}

export type Isolation = 'read_committed' | 'read_uncommitted';

/** One poll (one consumer `poll()`), with every partition that returned records. */
export interface Poll { f: 'poll'; isolation: Isolation; reads: PartitionRead[] }

/** A micro-operation of a send, poll or transaction. */
export type Mop = Send | Poll;

/**
 * What an operation does. `final` is the full read at the end of a run; `commit` a group member's
 * offset commit; the fault kinds are the nemesis's.
 */
export type OpKind = 'send' | 'txn' | 'poll' | 'assign' | 'commit' | 'crash' | 'final' | FaultKind;
/** Each fault and the step that ends it: kill/restart, pause/resume, isolate/rejoin (network), fill-disk/free-disk. */
export type FaultKind = 'kill' | 'restart' | 'pause' | 'resume' | 'isolate' | 'rejoin' | 'fill-disk' | 'free-disk';
export const FAULT_KINDS: readonly FaultKind[] = ['kill', 'restart', 'pause', 'resume', 'isolate', 'rejoin', 'fill-disk', 'free-disk'];

/** The nemesis's process number. */
export const NEMESIS = -1;

export interface Op {
  /** Position in the history. */
  index: number;
  process: number;
  /** Milliseconds since the run started. */
  timeMs: number;
  type: OpType;
  f: OpKind;
  /** send, txn, poll, final: what was asked for (invoke) or what happened (completion). */
  mops?: Mop[];
  /** assign: the partitions the consumer reads from now on (its positions start over, unless `positions` says otherwise). */
  partitions?: string[];
  /**
   * assign: where the consumer resumes in the partitions it was newly given (from the group's
   * committed offsets); its other partitions keep their positions. commit: the offsets committed.
   */
  positions?: Record<string, number>;
  /** assign, commit: the consumer group (its members' commits and assignments are checked together). */
  group?: string;
  /** A fault's node id. */
  node?: number;
  /** Why a completion is fail or info. */
  error?: string;
}

export type History = Op[];

/** The sends of an operation's micro-operations. */
export function sendsOf(op: Op): Send[] {
  return (op.mops ?? []).filter((m): m is Send => m.f === 'send');
}

/** The polls of an operation's micro-operations. */
export function pollsOf(op: Op): Poll[] {
  return (op.mops ?? []).filter((m): m is Poll => m.f === 'poll');
}

/** The partition name a topic and partition index make (`orders-3`). */
export function partitionOf(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

/**
 * Appends operations with their index and time; the clock is given, so a test can build histories
 * by hand and the workload can use real time.
 */
export class HistoryRecorder {
  readonly ops: Op[] = [];
  constructor(private readonly nowMs: () => number) {}

  add(op: Omit<Op, 'index' | 'timeMs'>): Op {
    const full: Op = { ...op, index: this.ops.length, timeMs: this.nowMs() };
    this.ops.push(full);
    return full;
  }

  invoke(process: number, f: OpKind, rest: Partial<Op> = {}): Op {
    return this.add({ ...rest, process, f, type: 'invoke' });
  }

  complete(invocation: Op, type: Exclude<OpType, 'invoke'>, rest: Partial<Op> = {}): Op {
    return this.add({ ...rest, process: invocation.process, f: invocation.f, type });
  }
}

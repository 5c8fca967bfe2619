// Fetch sessions (KIP-227). A client that opens a session sends its full partition list once;
// later fetches name only what changed, and responses carry only partitions with news (records,
// a moved high watermark / last stable offset / log start offset, or an error). The cache is
// bounded by `max.incremental.fetch.session.cache.slots`; when full, the least recently used
// session older than the eviction age gives way, and otherwise the client gets a sessionless
// full fetch (session id 0), which every client handles. An incremental fetch reads the session's
// partitions in its order, and those that returned records move to the back of it.
import { ErrorCode } from '../protocol/index.js';
import { assert, partitionKey, type Clock } from '../util/index.js';

export const INITIAL_EPOCH = 0;
export const FINAL_EPOCH = -1;
/** Kafka's FetchSessionCache lets a session be evicted once it is this old. */
export const SESSION_EVICTION_MS = 120_000;

export interface SessionPartition {
  /** Topic name, or topic id for fetch v13+. */
  topic: string;
  partition: number;
  fetchOffset: bigint;
  partitionMaxBytes: number;
  logStartOffset: bigint;
  currentLeaderEpoch: number;
  lastFetchedEpoch: number;
}

export interface PartitionResultState {
  topic: string;
  partition: number;
  errorCode: number;
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
  recordsBytes: number;
  /** Answered even when nothing else changed (a DivergingEpoch or a preferred read replica, as Kafka's FetchSession). */
  mustRespond?: boolean;
}

interface CachedPartition extends SessionPartition {
  sentHighWatermark: bigint;
  sentLastStableOffset: bigint;
  sentLogStartOffset: bigint;
}

interface Session {
  id: number;
  epoch: number;
  partitions: Map<string, CachedPartition>;
  lastUsedMs: number;
  createdMs: number;
}

export interface FetchContext {
  /** Session id for the response: 0 for sessionless fetches. */
  readonly sessionId: number;
  /** Partitions to read, in the order the response should list them. */
  readonly partitions: SessionPartition[];
  /**
   * For incremental fetches, keeps only partitions with news and remembers what was sent.
   * `results[i]` must answer `partitions[i]`.
   */
  filter<T extends PartitionResultState>(results: T[]): T[];
}

export type FetchSessionOutcome = { errorCode: 0; context: FetchContext } | { errorCode: number; context: null };

const key = partitionKey;

function fullContext(sessionId: number, partitions: SessionPartition[], session: Session | null): FetchContext {
  return {
    sessionId,
    partitions,
    filter(results) {
      if (session) for (const r of results) remember(session, r);
      return results;
    },
  };
}

function remember(session: Session, r: PartitionResultState): void {
  const p = session.partitions.get(key(r.topic, r.partition));
  if (!p) return;
  p.sentHighWatermark = r.highWatermark;
  p.sentLastStableOffset = r.lastStableOffset;
  p.sentLogStartOffset = r.logStartOffset;
}

export class FetchSessionCache {
  private readonly sessions = new Map<number, Session>();
  private nextId = 1;

  constructor(private readonly slotsMax: number, private readonly clock: Clock, private readonly evictionMs = SESSION_EVICTION_MS) {}

  get size(): number { return this.sessions.size; }

  /**
   * Interprets a fetch's session fields. `partitions` are the request's partitions; `forgotten`
   * the ones it drops (incremental only).
   */
  begin(sessionId: number, epoch: number, partitions: SessionPartition[], forgotten: { topic: string; partition: number }[]): FetchSessionOutcome {
    const now = this.clock.nowMs();
    if (epoch === FINAL_EPOCH) {
      if (sessionId !== 0) this.sessions.delete(sessionId);
      return { errorCode: 0, context: fullContext(0, partitions, null) };
    }
    if (epoch === INITIAL_EPOCH) {
      if (sessionId !== 0) this.sessions.delete(sessionId);
      const session = this.create(partitions, now);
      return { errorCode: 0, context: fullContext(session?.id ?? 0, partitions, session) };
    }
    const session = this.sessions.get(sessionId);
    if (!session) return { errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND, context: null };
    if (session.epoch !== epoch) return { errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH, context: null };
    session.epoch = epoch === 0x7fffffff ? 1 : epoch + 1;
    session.lastUsedMs = now;
    for (const f of forgotten) session.partitions.delete(key(f.topic, f.partition));
    for (const p of partitions) {
      const k = key(p.topic, p.partition);
      const cached = session.partitions.get(k);
      if (cached) Object.assign(cached, p);
      else session.partitions.set(k, { ...p, sentHighWatermark: -1n, sentLastStableOffset: -1n, sentLogStartOffset: -1n });
    }
    const all = [...session.partitions.values()];
    return {
      errorCode: 0,
      context: {
        sessionId: session.id,
        partitions: all,
        // results[i] answers all[i]: no per-partition key strings or map lookups on this path,
        // which runs for every partition of the session on every fetch.
        filter(results) {
          assert(results.length === all.length, `fetch session filter: ${results.length} results for ${all.length} partitions`);
          const out: typeof results = [];
          for (let i = 0; i < results.length; i++) {
            const r = results[i]!;
            const c = all[i]!;
            const news = r.errorCode !== 0 || r.recordsBytes > 0 || r.mustRespond === true || r.highWatermark !== c.sentHighWatermark
              || r.lastStableOffset !== c.sentLastStableOffset || r.logStartOffset !== c.sentLogStartOffset;
            if (!news) continue;
            c.sentHighWatermark = r.highWatermark;
            c.sentLastStableOffset = r.lastStableOffset;
            c.sentLogStartOffset = r.logStartOffset;
            out.push(r);
            // Kafka's IncrementalFetchContext: a partition that returned records goes to the back
            // of the session's order, so the next fetch's max_bytes reaches the others first and
            // one busy partition cannot starve the rest.
            if (r.recordsBytes > 0) {
              const k = key(c.topic, c.partition);
              session.partitions.delete(k);
              session.partitions.set(k, c);
            }
          }
          return out;
        },
      },
    };
  }

  /** Creates a session, evicting an idle one when the cache is full; null when none can go. */
  private create(partitions: SessionPartition[], now: number): Session | null {
    if (this.sessions.size >= this.slotsMax && !this.evictOne(now)) return null;
    let id = this.nextId;
    while (this.sessions.has(id) || id === 0) id = (id % 0x7fffffff) + 1;
    this.nextId = (id % 0x7fffffff) + 1;
    const session: Session = {
      id, epoch: 1, lastUsedMs: now, createdMs: now,
      partitions: new Map(partitions.map((p) => [key(p.topic, p.partition), { ...p, sentHighWatermark: -1n, sentLastStableOffset: -1n, sentLogStartOffset: -1n }])),
    };
    this.sessions.set(id, session);
    return session;
  }

  private evictOne(now: number): boolean {
    let victim: Session | null = null;
    for (const s of this.sessions.values()) {
      if (now - s.lastUsedMs < this.evictionMs) continue;
      if (!victim || s.lastUsedMs < victim.lastUsedMs) victim = s;
    }
    if (!victim) return false;
    this.sessions.delete(victim.id);
    return true;
  }
}

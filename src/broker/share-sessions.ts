// Share sessions (KIP-932, Kafka's ShareSessionCache): per (group, member) on each broker, the
// partitions a share consumer fetches from here and an epoch, so a ShareFetch names only what
// changed. Epoch 0 opens a session (replacing the member's old one, whose partitions are handed
// back for release), -1 closes it (acknowledgements only), any other must be the session's next
// epoch (INVALID_SHARE_SESSION_EPOCH) and a missing session is SHARE_SESSION_NOT_FOUND. At most
// `group.share.max.share.sessions` sessions (SHARE_SESSION_LIMIT_REACHED beyond), each with at
// most `limits.sharePartitionsPerSessionMax` partitions. Time comes in as an argument.
import { ErrorCode } from '../protocol/index.js';
import { limits } from '../util/index.js';

export const SHARE_SESSION_INITIAL_EPOCH = 0;
export const SHARE_SESSION_FINAL_EPOCH = -1;

export interface SessionPartition { topicId: string; partition: number }

export interface ShareSession {
  readonly groupId: string;
  readonly memberId: string;
  /** The epoch the member's next request must carry. */
  epoch: number;
  readonly partitions: Map<string, SessionPartition>;
  lastUsedMs: number;
}

const pkey = (p: SessionPartition) => `${p.topicId}:${p.partition}`;
const skey = (groupId: string, memberId: string) => `${groupId}\u0000${memberId}`;

export type SessionOutcome =
  | { errorCode: 0; session: ShareSession; replaced: SessionPartition[] }
  | { errorCode: number; session: null; replaced: SessionPartition[] };

export class ShareSessionCache {
  private readonly sessions = new Map<string, ShareSession>();

  constructor(readonly sessionsMax: number) {}

  get size(): number { return this.sessions.size; }

  /**
   * The session a request with `epoch` runs in: opened (0), found at its epoch, or an error. The
   * partitions to add and forget are applied; a request that closes the session (-1) finds it but
   * does not change it. `replaced`: the partitions of a session an epoch-0 request replaced.
   */
  open(groupId: string, memberId: string, epoch: number, add: SessionPartition[], forget: SessionPartition[], nowMs: number): SessionOutcome {
    const k = skey(groupId, memberId);
    const existing = this.sessions.get(k);
    if (epoch === SHARE_SESSION_INITIAL_EPOCH) {
      if (forget.length > 0) return { errorCode: ErrorCode.INVALID_REQUEST, session: null, replaced: [] };
      // A member gone without closing its session leaves it behind: idle ones make room (their records' locks run out on their own).
      if (!existing && this.sessions.size >= this.sessionsMax) this.evictIdle(nowMs, limits.shareSessionIdleMs);
      if (!existing && this.sessions.size >= this.sessionsMax) return { errorCode: ErrorCode.SHARE_SESSION_LIMIT_REACHED, session: null, replaced: [] };
      if (add.length > limits.sharePartitionsPerSessionMax) return { errorCode: ErrorCode.INVALID_REQUEST, session: null, replaced: [] };
      const session: ShareSession = { groupId, memberId, epoch: 0, partitions: new Map(add.map((p) => [pkey(p), p])), lastUsedMs: nowMs };
      this.sessions.set(k, session);
      return { errorCode: 0, session, replaced: existing ? [...existing.partitions.values()].filter((p) => !session.partitions.has(pkey(p))) : [] };
    }
    if (!existing) return { errorCode: ErrorCode.SHARE_SESSION_NOT_FOUND, session: null, replaced: [] };
    if (epoch !== SHARE_SESSION_FINAL_EPOCH && epoch !== existing.epoch) return { errorCode: ErrorCode.INVALID_SHARE_SESSION_EPOCH, session: null, replaced: [] };
    existing.lastUsedMs = nowMs;
    if (epoch === SHARE_SESSION_FINAL_EPOCH) return { errorCode: 0, session: existing, replaced: [] };
    for (const p of forget) existing.partitions.delete(pkey(p));
    for (const p of add) {
      if (existing.partitions.size >= limits.sharePartitionsPerSessionMax && !existing.partitions.has(pkey(p))) return { errorCode: ErrorCode.INVALID_REQUEST, session: null, replaced: [] };
      existing.partitions.set(pkey(p), p);
    }
    return { errorCode: 0, session: existing, replaced: [] };
  }

  /** A request answered in the session: the next one carries the next epoch (wrapping past int32 max to 1, as Kafka). */
  advance(s: ShareSession): void { s.epoch = s.epoch >= 0x7fffffff ? 1 : s.epoch + 1; }

  /** Closes the member's session; its partitions, for releasing what it holds. */
  close(groupId: string, memberId: string): SessionPartition[] {
    const k = skey(groupId, memberId);
    const s = this.sessions.get(k);
    this.sessions.delete(k);
    return s ? [...s.partitions.values()] : [];
  }

  /** Sessions idle past `idleMs` (their member is gone without closing them); removed, for releasing. */
  evictIdle(nowMs: number, idleMs: number): ShareSession[] {
    const out: ShareSession[] = [];
    for (const [k, s] of this.sessions) if (nowMs - s.lastUsedMs >= idleMs) { this.sessions.delete(k); out.push(s); }
    return out;
  }
}

// BrokerHeartbeatManager: the active controller's session deadlines, against the clock it is given.
// This is soft state, as in Kafka: it is not in the metadata log, a standby has none, and a newly
// active controller starts every registered broker with a full session (activate), so a failover
// never fences a broker that was heartbeating to the old controller.
export interface BrokerSession {
  /** When the controller last heard from this incarnation (a registration or a heartbeat). */
  lastContactMs: number;
  /** The metadata offset the broker last reported; -1 before its first heartbeat. */
  metadataOffset: number;
  /** Heartbeats received and not yet answered (their answers wait for a commit). */
  answersPending: number;
}

export class BrokerHeartbeatManager {
  private readonly sessions = new Map<number, BrokerSession>();

  constructor(readonly sessionTimeoutMs: number) {}

  /** A registration or heartbeat from `brokerId` at `nowMs`. */
  touch(brokerId: number, nowMs: number, metadataOffset = -1): void {
    const s = this.sessions.get(brokerId);
    if (s === undefined) this.sessions.set(brokerId, { lastContactMs: nowMs, metadataOffset, answersPending: 0 });
    else {
      s.lastContactMs = Math.max(s.lastContactMs, nowMs);
      s.metadataOffset = Math.max(s.metadataOffset, metadataOffset);
    }
  }

  /**
   * A heartbeat's answer waits for a commit. The broker sends its next heartbeat only once it has
   * the answer, so until then it is not silent: a slow commit (a loaded disk under the quorum) must
   * not fence brokers that are waiting on the controller.
   */
  answerPending(brokerId: number): void {
    const s = this.sessions.get(brokerId);
    if (s !== undefined) s.answersPending++;
  }

  /** The answer to a pending heartbeat went out at `nowMs`: the broker's silence counts from now. */
  answered(brokerId: number, nowMs: number): void {
    const s = this.sessions.get(brokerId);
    if (s === undefined || s.answersPending === 0) return;
    s.answersPending--;
    this.touch(brokerId, nowMs);
  }

  /**
   * The controller itself did not run for `stalledMs` (a blocked event loop, a long GC pause):
   * heartbeats that arrived meanwhile sat unread in its sockets, so that time is not the brokers'
   * silence. Every session moves on by it (never past `nowMs`); a dead broker is fenced that much later.
   */
  discountStall(stalledMs: number, nowMs: number): void {
    if (!(stalledMs > 0)) return;
    for (const s of this.sessions.values()) s.lastContactMs = Math.min(nowMs, s.lastContactMs + stalledMs);
  }

  /** Forgets a broker's session (a new incarnation starts its own). */
  remove(brokerId: number): void {
    this.sessions.delete(brokerId);
  }

  clear(): void {
    this.sessions.clear();
  }

  session(brokerId: number): Readonly<BrokerSession> | undefined {
    return this.sessions.get(brokerId);
  }

  /** True while the broker has been heard from within `broker.session.timeout.ms`, or waits for an answer. */
  hasValidSession(brokerId: number, nowMs: number): boolean {
    const s = this.sessions.get(brokerId);
    return s !== undefined && (s.answersPending > 0 || nowMs - s.lastContactMs < this.sessionTimeoutMs);
  }

  /** Brokers among `candidates` whose session has expired at `nowMs`, lowest id first. */
  expired(candidates: Iterable<number>, nowMs: number): number[] {
    const out: number[] = [];
    for (const id of candidates) if (!this.hasValidSession(id, nowMs)) out.push(id);
    return out.sort((a, b) => a - b);
  }
}

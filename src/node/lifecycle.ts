// A broker's side of its life in a KRaft cluster, as Kafka's BrokerLifecycleManager: register with
// the active controller, then heartbeat every `broker.heartbeat.interval.ms`; start fenced and ask
// to be unfenced once this broker's metadata has caught up; on controlled shutdown keep
// heartbeating with wantShutDown until the controller has moved the leaderships away and answers
// shouldShutDown. A deterministic state machine: the time comes in as an argument, it returns the
// request to send (at most one in flight, as Kafka), and a driver does the I/O.
//
// Beyond Kafka, it keeps a lease: the controller fences a broker `broker.session.timeout.ms` after
// the last heartbeat it received, so a broker may trust its leaderships only until that long after
// it *sent* the last heartbeat answered unfenced. A broker that stalled past its session (a long
// pause, a frozen VM) wakes with its lease expired and refuses client writes until a heartbeat
// answers it unfenced again, which the controller does only once its metadata holds its fencing.
import { ErrorCode, type BrokerHeartbeatRequest, type BrokerHeartbeatResponse, type BrokerRegistrationRequest } from '../protocol/index.js';
import { assert } from '../util/index.js';

/** Kafka's BrokerState names for the part of a life the controller sees. */
export type LifecycleState = 'starting' | 'recovery' | 'running' | 'pending-controlled-shutdown' | 'shutting-down';

export interface LifecycleConfig {
  /** What the broker registers as (listeners, rack, features, incarnation id); previousBrokerEpoch is filled in here. */
  registration: Omit<BrokerRegistrationRequest, 'previousBrokerEpoch'>;
  heartbeatIntervalMs: number;
  /** Wait after a failed or refused request before the next one. */
  retryBackoffMs: number;
  /** broker.session.timeout.ms: how long after sending a heartbeat answered unfenced this broker holds its lease. */
  sessionTimeoutMs: number;
  /** The broker epoch the last clean shutdown recorded (-1: none, an unclean shutdown), sent at the first registration. */
  previousBrokerEpoch?: bigint;
}

export type LifecycleRequest =
  | { api: 'BrokerRegistration'; request: BrokerRegistrationRequest }
  | { api: 'BrokerHeartbeat'; request: BrokerHeartbeatRequest };

export class BrokerLifecycle {
  state: LifecycleState = 'starting';
  /** Given by the controller at registration (the offset of its RegisterBrokerRecord); -1 before. */
  brokerEpoch = -1n;
  /** The broker epoch of an earlier registration, sent again so the controller can tell a restart (KIP-841). */
  private previousBrokerEpoch = -1n;
  private inFlight: LifecycleRequest['api'] | null = null;
  /** When the request in flight was sent. */
  private inFlightSentMs = 0;
  /** Until when this broker may act on its leaderships (see the lease above); never before an unfenced answer. */
  private leaseExpiresMs = Number.NEGATIVE_INFINITY;
  private nextSendMs: number;
  private readyToUnfence = false;
  private shutdownRequested = false;

  constructor(private readonly config: LifecycleConfig, nowMs: number) {
    assert(config.heartbeatIntervalMs > 0 && config.retryBackoffMs >= 0, 'heartbeat interval and backoff');
    this.nextSendMs = nowMs;
    this.previousBrokerEpoch = config.previousBrokerEpoch ?? -1n;
  }

  /** The request to send at `nowMs`, or null (one in flight, not due yet, or shut down). */
  poll(nowMs: number, currentMetadataOffset: bigint): LifecycleRequest | null {
    if (this.inFlight !== null || this.state === 'shutting-down' || nowMs < this.nextSendMs) return null;
    const r: LifecycleRequest = this.state === 'starting'
      ? { api: 'BrokerRegistration', request: { ...this.config.registration, previousBrokerEpoch: this.previousBrokerEpoch } }
      : {
        api: 'BrokerHeartbeat',
        request: {
          brokerId: this.config.registration.brokerId, brokerEpoch: this.brokerEpoch, currentMetadataOffset,
          // A broker whose metadata is behind asks to stay fenced: it would serve stale leaderships.
          wantFence: !this.readyToUnfence && this.state === 'recovery', wantShutDown: this.shutdownRequested, offlineLogDirs: [],
        },
      };
    this.inFlight = r.api;
    this.inFlightSentMs = nowMs;
    return r;
  }

  /** When `poll` may next return a request (a driver's timer), or null when nothing is ever due again. */
  nextWakeMs(): number | null {
    return this.state === 'shutting-down' || this.inFlight !== null ? null : this.nextSendMs;
  }

  onRegistrationResponse(nowMs: number, r: { errorCode: number; brokerEpoch: bigint }): void {
    assert(this.inFlight === 'BrokerRegistration', 'a registration response without a registration in flight');
    this.inFlight = null;
    if (r.errorCode !== ErrorCode.NONE) {
      // DUPLICATE_BROKER_REGISTRATION (the old incarnation's session has not expired), NOT_CONTROLLER, ...: try again.
      this.nextSendMs = nowMs + this.config.retryBackoffMs;
      return;
    }
    assert(r.brokerEpoch >= 0n, 'a registration without a broker epoch');
    this.brokerEpoch = r.brokerEpoch;
    this.state = this.shutdownRequested ? 'pending-controlled-shutdown' : 'recovery';
    this.nextSendMs = nowMs; // the first heartbeat right away, as Kafka
  }

  onHeartbeatResponse(nowMs: number, r: Pick<BrokerHeartbeatResponse, 'errorCode' | 'isFenced' | 'shouldShutDown' | 'isCaughtUp'>): void {
    assert(this.inFlight === 'BrokerHeartbeat', 'a heartbeat response without a heartbeat in flight');
    this.inFlight = null;
    if (r.errorCode === ErrorCode.STALE_BROKER_EPOCH) {
      // The controller no longer knows this registration (it expired, or a newer one replaced it): register again.
      this.previousBrokerEpoch = this.brokerEpoch;
      this.brokerEpoch = -1n;
      this.state = 'starting';
      this.nextSendMs = nowMs + this.config.retryBackoffMs;
      return;
    }
    if (r.errorCode !== ErrorCode.NONE) {
      this.nextSendMs = nowMs + this.config.retryBackoffMs;
      return;
    }
    this.nextSendMs = nowMs + this.config.heartbeatIntervalMs;
    // The controller received this heartbeat no earlier than it was sent, so it cannot fence this
    // broker before sentMs + session (given the same broker.session.timeout.ms on both sides).
    if (!r.isFenced) this.leaseExpiresMs = Math.max(this.leaseExpiresMs, this.inFlightSentMs + this.config.sessionTimeoutMs);
    if (this.state === 'pending-controlled-shutdown') {
      if (r.shouldShutDown) this.state = 'shutting-down';
      // The controller lets a broker go once it has seen the shutdown's record and leads nothing:
      // ask again soon rather than a whole interval later (Kafka hurries these heartbeats too).
      else this.nextSendMs = nowMs + this.config.retryBackoffMs;
      return;
    }
    if (this.state === 'recovery' && !r.isFenced) this.state = 'running';
    else if (this.state === 'running' && r.isFenced) this.state = 'recovery'; // fenced by the controller (a missed session)
  }

  /** The request in flight failed in the transport (timeout, connection lost, no controller known). */
  onRequestFailed(nowMs: number): void {
    assert(this.inFlight !== null, 'a failure without a request in flight');
    this.inFlight = null;
    this.nextSendMs = nowMs + this.config.retryBackoffMs;
  }

  /**
   * Whether at `nowMs` the controller cannot have fenced this broker yet, so that what its metadata
   * says it leads, it still leads (short of an ordinary leader change it has not seen yet, as in Kafka).
   */
  holdsLease(nowMs: number): boolean { return nowMs < this.leaseExpiresMs; }

  /** This broker's metadata has caught up with the log (at least to its registration): it may be unfenced. */
  markReadyToUnfence(): void { this.readyToUnfence = true; }

  /**
   * Controlled shutdown (SIGTERM): from the next heartbeat on, ask to shut down; the controller moves
   * this broker's leaderships away first. Done when `state` is 'shutting-down'.
   */
  beginControlledShutdown(nowMs: number): void {
    if (this.state === 'shutting-down') return;
    this.shutdownRequested = true;
    if (this.state === 'starting') {
      // Never registered: nothing leads here, nothing to hand over.
      if (this.brokerEpoch < 0n && this.inFlight === null) this.state = 'shutting-down';
      return;
    }
    this.state = 'pending-controlled-shutdown';
    if (this.inFlight === null) this.nextSendMs = nowMs;
  }
}

// Drives the pure BrokerLifecycle (lifecycle.ts) against the controller through the
// ControllerChannel: sends what it asks for, feeds back the answers, and wakes at the time it
// names (an unref'd timer, so a heartbeat never keeps a process alive by itself). It marks the
// broker ready to unfence once the broker's metadata holds its own registration.
import type { Clock, Logger } from '../util/index.js';
import { BrokerLifecycle, type LifecycleConfig, type LifecycleState } from './lifecycle.js';
import type { ControllerChannel } from '../broker/index.js';

export class LifecycleDriver {
  readonly lifecycle: BrokerLifecycle;
  private timer: NodeJS.Timeout | undefined;
  private paused = false;
  private closed = false;
  private readonly watchers = new Set<() => void>();

  constructor(
    config: LifecycleConfig,
    private readonly controller: () => ControllerChannel,
    /** The offset of the last record in this broker's metadata image. */
    private readonly metadataOffset: () => bigint,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    this.lifecycle = new BrokerLifecycle(config, clock.nowMs());
  }

  get state(): LifecycleState { return this.lifecycle.state; }
  get brokerEpoch(): bigint { return this.lifecycle.brokerEpoch; }
  /** Whether this broker may still act as the leader its metadata says it is (BrokerLifecycle.holdsLease). */
  holdsLease(): boolean { return this.lifecycle.holdsLease(this.clock.nowMs()); }

  start(): void { this.pump(); }

  /** Stops sending (tests: a broker that stops heartbeating); the request in flight still completes. */
  pause(): void {
    this.paused = true;
    clearTimeout(this.timer);
  }

  resume(): void {
    this.paused = false;
    this.pump();
  }

  /** Resolves once `done()` holds after some step of the lifecycle or metadata; rejects after `timeoutMs`. */
  until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done()) return;
        this.watchers.delete(check);
        clearTimeout(t);
        resolve();
      };
      const t = setTimeout(() => { this.watchers.delete(check); reject(new Error(`${what}: not within ${timeoutMs} ms (broker state ${this.state})`)); }, timeoutMs);
      this.watchers.add(check);
    });
  }

  /** The broker's metadata moved: it may now be caught up (and a watcher satisfied). */
  onMetadata(): void {
    this.notify();
    this.pump();
  }

  /**
   * Controlled shutdown: heartbeats ask to shut down until the controller, having moved this
   * broker's leaderships away, answers shouldShutDown; gives up after `timeoutMs`.
   */
  async controlledShutdown(timeoutMs: number): Promise<boolean> {
    if (this.closed) return false;
    this.paused = false;
    this.lifecycle.beginControlledShutdown(this.clock.nowMs());
    this.pump();
    try {
      await this.until(() => this.state === 'shutting-down', timeoutMs, 'controlled shutdown');
      return true;
    } catch (e) {
      this.logger.warn(`${(e as Error).message}; stopping anyway`);
      return false;
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private notify(): void {
    for (const w of [...this.watchers]) w();
  }

  private pump(): void {
    if (this.closed || this.paused) return;
    clearTimeout(this.timer);
    const l = this.lifecycle;
    const offset = this.metadataOffset();
    if (l.brokerEpoch >= 0n && offset >= l.brokerEpoch) l.markReadyToUnfence();
    const r = l.poll(this.clock.nowMs(), offset);
    if (r === null) {
      const wake = l.nextWakeMs();
      if (wake !== null) {
        this.timer = setTimeout(() => this.pump(), Math.max(0, wake - this.clock.nowMs()));
        this.timer.unref();
      }
      return;
    }
    const sent = r.api === 'BrokerRegistration'
      ? this.controller().registerBroker(r.request).then((resp) => {
        if (resp.errorCode !== 0) this.logger.warn(`broker registration refused: error ${resp.errorCode}; retrying`);
        l.onRegistrationResponse(this.clock.nowMs(), resp);
      })
      : this.controller().brokerHeartbeat(r.request).then((resp) => {
        const before = l.state;
        l.onHeartbeatResponse(this.clock.nowMs(), resp);
        if (l.state !== before) this.logger.info(`broker ${r.request.brokerId}: ${before} → ${l.state} (heartbeat wantShutDown=${r.request.wantShutDown}, fenced=${resp.isFenced}, shouldShutDown=${resp.shouldShutDown})`);
      });
    sent.catch((e) => {
      this.logger.warn(`${r.api} failed: ${(e as Error).message}`);
      l.onRequestFailed(this.clock.nowMs());
    }).finally(() => {
      this.notify();
      this.pump();
    });
  }
}

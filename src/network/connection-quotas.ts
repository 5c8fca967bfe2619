// Kafka's ConnectionQuotas: how many connections the broker, each listener and each address may
// hold (max.connections, listener.name.<l>.max.connections, max.connections.per.ip and its
// overrides), and how fast they may be made (KIP-612: max.connection.creation.rate, per listener
// too, and the connection_creation_rate client quota of an address or of the default address).
// Time is an input: the network layer asks and does the waiting.
//
// As in Kafka: a listener's own limits default to the broker's (listener.name.<l>.max.connections
// unset is max.connections), and the inter-broker listener is exempt from the broker-wide count
// and rate while the broker has other listeners too (clients cannot starve replication), though
// not from its own listener's; a connection over the broker or listener rate is accepted once the
// rate allows (its wait is returned), one over its address's rate is closed after that wait and
// not counted by any rate; while more connections are open than max.connections allows, the
// network layer closes the least recently active ones of other listeners. Unlike Kafka, a
// connection over a count is closed at once (Kafka's acceptor waits for a slot instead), and rates
// are measured as the client quotas are (src/util/rate.ts: Kafka's SimpleRate, so a fresh address does
// not get ten windows' worth at once).
import { isIP } from 'node:net';
import { SampledRate, assert, limits, throttleTimeMs, type QuotaWindow } from '../util/index.js';

export interface ConnectionLimits {
  connectionsMax: number; // max.connections
  connectionsPerIpMax: number; // max.connections.per.ip
  /** max.connections.per.ip.overrides with host names resolved: address -> its limit instead. */
  connectionsPerIpOverrides?: ReadonlyMap<string, number>;
  /** listener.name.<l>.max.connections, by listener name. */
  listenerConnectionsMax?: ReadonlyMap<string, number>;
  /** max.connection.creation.rate (connections per second; none when absent). */
  connectionCreationRateMax?: number;
  /** listener.name.<l>.max.connection.creation.rate, by listener name. */
  listenerConnectionCreationRateMax?: ReadonlyMap<string, number>;
  /** The inter-broker listener (protected while the broker has other listeners). */
  interBrokerListener?: string;
}

/**
 * An address as the per-address limits and quotas know it (Kafka compares InetAddresses): IPv4
 * clients of a dual-stack listener come as ::ffff:a.b.c.d, and an IPv6 address may be written
 * in several ways (upper case, zeros not compressed).
 */
export function connectionAddress(ip: string): string {
  const address = ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
  if (isIP(address) === 6) {
    try {
      return new URL(`http://[${address}]`).hostname.slice(1, -1);
    } catch {
      // a zone index (fe80::1%eth0): as written
    }
  }
  return address.toLowerCase();
}

const UNLIMITED_RATE = 2_147_483_647;

export class ConnectionQuotas {
  /** Connections holding a slot: open ones, and TLS ones in their handshake. */
  private total = 0;
  private readonly perAddress = new Map<string, number>();
  private readonly perListener = new Map<string, number>();
  private brokerRate: SampledRate;
  private readonly listenerRates = new Map<string, SampledRate>();
  /** By address, in least recently used order (bounded by limits.connectionRateAddressesMax). */
  private readonly addressRates = new Map<string, SampledRate>();

  constructor(private limitsNow: ConnectionLimits, private readonly window: QuotaWindow, private readonly listenerCount: () => number) {
    this.brokerRate = new SampledRate(window);
  }

  get limits(): ConnectionLimits { return this.limitsNow; }

  /** New limits: they apply to connections made from now on (and excess() may now be positive). */
  setLimits(update: Partial<ConnectionLimits>): void {
    this.limitsNow = { ...this.limitsNow, ...update };
  }

  get connections(): number { return this.total; }

  private isProtected(listener: string): boolean {
    return listener === this.limitsNow.interBrokerListener && this.listenerCount() > 1;
  }

  /** The inter-broker listener while it is protected, else null. */
  protectedListener(): string | null {
    const l = this.limitsNow.interBrokerListener;
    return l !== undefined && this.isProtected(l) ? l : null;
  }

  private rateMax(listener: string): { broker: number | null; listener: number | null } {
    const b = this.limitsNow.connectionCreationRateMax;
    const l = this.limitsNow.listenerConnectionCreationRateMax?.get(listener) ?? b;
    return {
      broker: b === undefined || b >= UNLIMITED_RATE || this.isProtected(listener) ? null : b,
      listener: l === undefined || l >= UNLIMITED_RATE ? null : l,
    };
  }

  /** Whether connections on `listener` go through acceptThrottleMs (a broker or listener rate applies). */
  rateLimited(listener: string): boolean {
    const r = this.rateMax(listener);
    return r.broker !== null || r.listener !== null;
  }

  /**
   * Records a connection accepted on `listener` against the broker and listener rates: how long to
   * wait before serving it (0: at once), the longer of the two throttles, at most one window.
   */
  acceptThrottleMs(listener: string, nowMs: number): number {
    const r = this.rateMax(listener);
    let wait = 0;
    if (r.broker !== null) wait = this.record(this.brokerRate, r.broker, nowMs);
    if (r.listener !== null) {
      let rate = this.listenerRates.get(listener);
      if (rate === undefined) this.listenerRates.set(listener, rate = new SampledRate(this.window));
      wait = Math.max(wait, this.record(rate, r.listener, nowMs));
    }
    return wait;
  }

  /** Takes back what acceptThrottleMs recorded for a connection that is not accepted after all. */
  unrecordAccept(listener: string, nowMs: number): void {
    const r = this.rateMax(listener);
    if (r.broker !== null) this.brokerRate.record(-1, nowMs);
    if (r.listener !== null) this.listenerRates.get(listener)?.record(-1, nowMs);
  }

  /** Connections open past max.connections (the inter-broker listener may take them there). */
  excess(): number {
    return Math.max(0, this.total - this.limitsNow.connectionsMax);
  }

  /**
   * The connection_creation_rate quota of `address` (`quota`: its own or the default address's;
   * null: none): 0 when a connection may be made now (recorded), else how long its maker should
   * wait (the connection is closed after that long and not recorded).
   */
  addressThrottleMs(address: string, quota: number | null, nowMs: number): number {
    if (quota === null || quota >= UNLIMITED_RATE) return 0;
    let rate = this.addressRates.get(address);
    if (rate === undefined) {
      this.evictIdleAddressRates(nowMs);
      rate = new SampledRate(this.window);
    } else {
      this.addressRates.delete(address);
    }
    this.addressRates.set(address, rate);
    const wait = this.record(rate, quota, nowMs);
    if (wait > 0) rate.record(-1, nowMs);
    return wait;
  }

  /**
   * Takes a slot of max.connections, of the listener's and of the address's limit: null when it
   * was taken, else the limit that is full. release() gives it back.
   */
  admit(address: string, listener: string): string | null {
    const c = this.limitsNow;
    const fromAddress = this.perAddress.get(address) ?? 0;
    const onListener = this.perListener.get(listener) ?? 0;
    if (fromAddress >= (c.connectionsPerIpOverrides?.get(address) ?? c.connectionsPerIpMax)) return 'max.connections.per.ip';
    const listenerMax = c.listenerConnectionsMax?.get(listener);
    if (onListener >= (listenerMax ?? c.connectionsMax)) return listenerMax === undefined ? 'max.connections' : `listener.name.${listener.toLowerCase()}.max.connections`;
    if (!this.isProtected(listener) && this.total >= c.connectionsMax) return 'max.connections';
    this.total++;
    this.perAddress.set(address, fromAddress + 1);
    this.perListener.set(listener, onListener + 1);
    return null;
  }

  release(address: string, listener: string): void {
    this.total--;
    const n = (this.perAddress.get(address) ?? 1) - 1;
    if (n <= 0) this.perAddress.delete(address);
    else this.perAddress.set(address, n);
    const l = (this.perListener.get(listener) ?? 1) - 1;
    this.perListener.set(listener, l);
    assert(this.total >= 0 && l >= 0, 'more connection slots given back than taken');
  }

  /** Kafka's Sensor.record with a quota: the throttle when the rate is over it, capped at one window. */
  private record(rate: SampledRate, quota: number, nowMs: number): number {
    rate.record(1, nowMs);
    return Math.min(throttleTimeMs(rate.measure(nowMs), quota, rate.windowMs(nowMs)), this.window.windowMs);
  }

  /** Address rates are kept while they count (samples x window since their last connection), and at most limits.connectionRateAddressesMax. */
  private evictIdleAddressRates(nowMs: number): void {
    const idleMs = this.window.samples * this.window.windowMs;
    for (const [address, rate] of this.addressRates) {
      if (this.addressRates.size < limits.connectionRateAddressesMax && rate.idleSinceMs(nowMs) < idleMs) break;
      this.addressRates.delete(address);
    }
  }
}

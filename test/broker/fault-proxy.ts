// A fault-injecting TCP proxy for tests (the kernel here has no netem): it listens on a loopback
// port and relays each connection to one target, with faults set per direction and changed at any
// time: added latency, a bandwidth limit, dropped connections, and half-open connections that stop
// reading and writing while their sockets stay open (a peer that froze, or a link that lost every
// packet without a reset). A slow reader is a bandwidth limit towards the client: the proxy then
// reads the server's side only as fast as it passes bytes on, so the server's socket fills and the
// server must hold back (backpressure). The proxy itself buffers at most RELAY_BUFFER_BYTES per
// direction and connection beyond the kernel's socket buffers.
import { createServer, connect, type Server, type Socket } from 'node:net';

/** Faults of one direction of every connection. */
export interface DirectionFaults {
  /** Each chunk is passed on this long after it was read. */
  latencyMs: number;
  /** At most this many bytes a second are passed on (0: no limit). */
  bytesPerSecond: number;
}

/** What the proxy does to the bytes going to the server (`toServer`) and back to the client (`toClient`). */
export interface ProxyFaults {
  toServer: DirectionFaults;
  toClient: DirectionFaults;
  /** Relay nothing either way and read nothing, keeping the sockets open (half-open connections). */
  stalled: boolean;
  /** Refuse new connections (accepted, then reset at once), as an unreachable port would. */
  refuse: boolean;
}

const NO_FAULTS: ProxyFaults = { toServer: { latencyMs: 0, bytesPerSecond: 0 }, toClient: { latencyMs: 0, bytesPerSecond: 0 }, stalled: false, refuse: false };

/** Bytes read but not yet passed on, per direction and connection, before the proxy stops reading. */
export const RELAY_BUFFER_BYTES = 64 * 1024;
const TICK_MS = 5;

/** One direction of one connection: reads `from`, writes `to`, with the faults of `faults()`. */
class Relay {
  private readonly queue: { at: number; buf: Buffer }[] = [];
  private queued = 0;
  private tokens = 0;
  private refilledAt = Date.now();
  private timer: NodeJS.Timeout | null = null;
  private waitingForDrain = false;
  /** Bytes passed on. */
  passed = 0;

  constructor(private readonly from: Socket, private readonly to: Socket, private readonly faults: () => DirectionFaults, private readonly stalled: () => boolean) {
    from.on('data', (d: Buffer) => {
      this.queue.push({ at: Date.now() + this.faults().latencyMs, buf: d });
      this.queued += d.length;
      if (this.queued >= RELAY_BUFFER_BYTES) from.pause();
      this.pump();
    });
    from.on('end', () => this.pump());
  }

  /** Passes on what is due and allowed now, then sleeps until more is. */
  pump(): void {
    if (this.timer !== null) { clearTimeout(this.timer); this.timer = null; }
    if (this.to.destroyed) return;
    if (this.stalled()) { this.from.pause(); return; }
    const f = this.faults();
    const now = Date.now();
    if (f.bytesPerSecond > 0) {
      // A bucket of at most 20 ms worth (and at least one TCP segment), so bursts stay short.
      this.tokens = Math.min(this.tokens + ((now - this.refilledAt) * f.bytesPerSecond) / 1000, Math.max(f.bytesPerSecond / 50, 1460));
    }
    this.refilledAt = now;
    while (!this.waitingForDrain && this.queue.length > 0 && this.queue[0]!.at <= now) {
      const head = this.queue[0]!;
      const n = f.bytesPerSecond > 0 ? Math.min(head.buf.length, Math.floor(this.tokens)) : head.buf.length;
      if (n === 0) break;
      const piece = n === head.buf.length ? head.buf : head.buf.subarray(0, n);
      if (n === head.buf.length) this.queue.shift(); else head.buf = head.buf.subarray(n);
      this.queued -= n;
      this.passed += n;
      if (f.bytesPerSecond > 0) this.tokens -= n;
      if (!this.to.write(piece)) {
        this.waitingForDrain = true;
        this.to.once('drain', () => { this.waitingForDrain = false; this.pump(); });
      }
    }
    if (this.queued < RELAY_BUFFER_BYTES / 2 && this.from.isPaused() && !this.waitingForDrain) this.from.resume();
    if (this.queue.length === 0 && this.from.readableEnded) { this.to.end(); return; }
    if (this.queue.length > 0 && !this.waitingForDrain) {
      this.timer = setTimeout(() => this.pump(), Math.max(TICK_MS, this.queue[0]!.at - now));
    }
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}

/** The proxy: `port` on 127.0.0.1 relays to `target`. */
export class FaultProxy {
  private faults: ProxyFaults = structuredClone(NO_FAULTS);
  private readonly conns = new Set<{ client: Socket; server: Socket; relays: Relay[] }>();
  /** Connections accepted so far, and bytes passed each way by connections closed so far. */
  accepted = 0;
  private passedClosed = { toServer: 0, toClient: 0 };

  private constructor(private readonly server: Server, readonly port: number, readonly target: { host: string; port: number }) {}

  /** Starts a proxy to `target` on `port` (a free one when 0). */
  static start(target: { host: string; port: number }, port = 0): Promise<FaultProxy> {
    return new Promise((resolve, reject) => {
      let proxy: FaultProxy;
      const server = createServer({ pauseOnConnect: true }, (client) => proxy.accept(client));
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        proxy = new FaultProxy(server, (server.address() as { port: number }).port, target);
        resolve(proxy);
      });
    });
  }

  /** Changes the faults (merged into the current ones); live connections follow at once. */
  set(faults: { toServer?: Partial<DirectionFaults>; toClient?: Partial<DirectionFaults>; stalled?: boolean; refuse?: boolean }): void {
    this.faults = {
      toServer: { ...this.faults.toServer, ...faults.toServer }, toClient: { ...this.faults.toClient, ...faults.toClient },
      stalled: faults.stalled ?? this.faults.stalled, refuse: faults.refuse ?? this.faults.refuse,
    };
    for (const c of this.conns) for (const r of c.relays) r.pump();
  }

  /** Back to relaying faithfully. */
  heal(): void { this.set(structuredClone(NO_FAULTS)); }

  /** Resets every open connection (both sides see a reset), as a dropped link or a middlebox timeout. */
  dropAll(): number {
    const n = this.conns.size;
    for (const c of [...this.conns]) this.closeConn(c, true);
    return n;
  }

  get openConnections(): number { return this.conns.size; }

  /** Bytes passed on so far, each way. */
  get passed(): { toServer: number; toClient: number } {
    let toServer = this.passedClosed.toServer;
    let toClient = this.passedClosed.toClient;
    for (const c of this.conns) { toServer += c.relays[0]!.passed; toClient += c.relays[1]!.passed; }
    return { toServer, toClient };
  }

  close(): Promise<void> {
    this.dropAll();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    this.accepted++;
    if (this.faults.refuse) { client.resetAndDestroy(); return; }
    const server = connect({ host: this.target.host, port: this.target.port });
    server.pause();
    const c = { client, server, relays: [] as Relay[] };
    this.conns.add(c);
    c.relays.push(new Relay(client, server, () => this.faults.toServer, () => this.faults.stalled));
    c.relays.push(new Relay(server, client, () => this.faults.toClient, () => this.faults.stalled));
    server.once('connect', () => { if (!this.faults.stalled) { client.resume(); server.resume(); } });
    for (const s of [client, server]) {
      s.setNoDelay(true);
      s.on('error', () => this.closeConn(c, true));
      s.on('close', () => this.closeConn(c, false));
    }
  }

  private closeConn(c: { client: Socket; server: Socket; relays: Relay[] }, reset: boolean): void {
    if (!this.conns.delete(c)) return;
    for (const r of c.relays) r.stop();
    this.passedClosed.toServer += c.relays[0]!.passed;
    this.passedClosed.toClient += c.relays[1]!.passed;
    for (const s of [c.client, c.server]) {
      if (reset && !s.destroyed) s.resetAndDestroy();
      else s.destroy();
    }
  }
}

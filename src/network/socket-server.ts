// The network layer: listeners, connections, framing, ordered responses, backpressure and limits.
// Each connection may pipeline requests; up to `inFlightRequestsPerConnectionMax` run at once and
// their responses are written strictly in request order. A connection stops being read while it
// has too many requests in flight or too many response bytes queued (a slow reader), so one
// client can never stall the others or grow the broker's memory without bound.
//
// Reads land straight in request buffers: each connection's socket reads into the unfilled rest of
// the frame being received (net's `onread`), not into a fresh 64 KiB chunk per read that is then
// copied, and frame buffers come from a broker-wide pool that produce requests hand back once
// their records are in the log. At 600 MB/s of produce that is the difference between ten
// mark-compact GCs a second (V8 counts every fresh backing store as external memory) and none.
//
// A TLS listener (SSL, SASL_SSL) runs its sessions in our addon (src/security/native-tls.ts) where
// it is built: the socket reads ciphertext into the connection's own buffer, and one call decrypts
// all it brought straight into the request buffers, as plaintext reads land (node:tls would hand
// over each TLS record as its own event, and librdkafka writes ~1 KiB records); a response is
// encrypted in one call. Without the addon it accepts through node:tls and reads decrypted 'data'
// chunks. Either way everything after the handshake is the same code, and the principal of a
// client certificate is fixed at the handshake.
//
// A SASL listener (SASL_PLAINTEXT, SASL_SSL) gives each connection a SaslServerSession: until it
// has authenticated, only ApiVersions and the SASL exchange are served (anything else closes the
// connection) and frames are limited to limits.saslTokenBytesMax; the session's principal is the
// connection's from then on. A failed exchange is answered, then the connection stops being read
// and closes after connection.failed.authentication.delay.ms. All of it is in `saslGate` and
// `afterSasl` below.
import { createServer, Socket, type Server } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls';
import {
  tlsPeerPrincipal, nativeTlsAvailable, NativeTlsContext, NativeTlsSession, SaslServerSession,
  type ListenerTls, type NativeTlsPeer, type SaslInputs, type SaslListenerSettings,
} from '../security/index.js';
import { FrameSplitter, ProtocolError, decodeRequestHeader, encodeResponseFrame, type RequestHeader } from '../protocol/index.js';
import { BufferPool, QUOTA_WINDOW_DEFAULT, SlabLease, SlabPool, limits, type Clock, type Logger, type QuotaWindow } from '../util/index.js';
import { ConnectionQuotas, connectionAddress, type ConnectionLimits } from './connection-quotas.js';
import { RequestMetrics } from './request-metrics.js';

/**
 * What the socket server knows of a request when it hands it on: its header, the connection it came
 * on, when it was read, and the services the server was given. The broker room's RequestContext
 * adds what its router decides (the caller's rights); the network never looks inside `services`.
 */
export interface NetworkRequestContext<S = unknown> {
  readonly header: RequestHeader;
  readonly apiVersion: number;
  readonly connectionId: string;
  readonly clientAddress: string;
  readonly listenerName: string;
  readonly securityProtocol: string;
  /** `User:<name>`: the connection's current principal (TLS certificate or SASL), else User:ANONYMOUS. */
  readonly principal: string;
  /** The connection's SASL session on a SASL listener (SaslHandshake and SaslAuthenticate act on it). */
  readonly sasl?: SaslServerSession | undefined;
  readonly nowMs: number;
  readonly services: S;
  /**
   * Memory for bytes that go out in this request's response (fetched record batches): reused for
   * another response once this one has been written to the socket, so nothing may keep it past
   * the response. Absent where there is no socket (handler unit tests): use fresh buffers then.
   */
  readonly responseBytes?: (bytes: number) => Buffer;
}

/**
 * What became of a request. `frameDone`: nothing refers to the request frame any more; its buffer
 * may be reused. `request`: the decoded request, for what looks at it after the handler (client
 * quotas).
 */
export type RouteOutcome =
  | { kind: 'response'; apiKey: number; version: number; body: object; frameDone?: boolean; request?: object }
  | { kind: 'none'; frameDone?: boolean; request?: object }
  | { kind: 'close'; reason: string };

/**
 * Where the socket server hands each request it has framed (Kafka's RequestChannel, between the
 * SocketServer and the request handlers): the broker room's Router. Its outcome is written back
 * in request order.
 */
export interface RequestChannel<S> {
  route(header: RequestHeader, frame: Buffer, bodyOffset: number, ctx: NetworkRequestContext<S>): Promise<RouteOutcome>;
  /**
   * Whether a request of `apiKey` is handled only once every earlier request on its connection is
   * answered (Kafka reads a connection's next request only then), so that its answer says what the
   * broker knows when it is sent. Absent: every request is handled as it comes.
   */
  inTurn?(apiKey: number): boolean;
}

/**
 * Called once a request is handled, before its response is encoded (client quotas): may raise the
 * response's throttle_time_ms, and answers how long to mute the connection (KIP-219).
 */
export type ThrottleHook<S> = (ctx: NetworkRequestContext<S>, apiKey: number, request: object | undefined, requestBytes: number, handlerMs: number, body: object | null) => number;

export interface ListenerSpec {
  name: string;
  host: string;
  port: number;
  securityProtocol: string;
  /** Set for SSL and SASL_SSL listeners. */
  tls?: ListenerTls;
  /** Set for SASL_PLAINTEXT and SASL_SSL listeners. */
  sasl?: ListenerSasl;
}

export interface ListenerSasl {
  readonly settings: SaslListenerSettings;
  readonly inputs: SaslInputs;
  /** connection.failed.authentication.delay.ms */
  readonly failedAuthenticationDelayMs: number;
}

export interface NetworkLimits extends ConnectionLimits {
  requestBytesMax: number; // socket.request.max.bytes
  listenBacklog?: number; // socket.listen.backlog.size
  idleMs: number; // connections.max.idle.ms
  inFlightPerConnectionMax: number; // bounded by queued.max.requests
}

interface GateEntry { readonly socket: Socket; readonly go: (rated: boolean) => void }

interface Slot {
  chunks: Buffer[] | null;
  done: boolean;
  /** A request handled in turn (RequestChannel.inTurn) that waits for the ones before it: starts it. */
  start: (() => void) | null;
  /** Response memory the handler asked for (ctx.responseBytes); released once the response is written. */
  lease: SlabLease | null;
}

export interface NetworkStats {
  connectionsOpen: number;
  connectionsAccepted: number;
  /** Connections closed at once for a full count (max.connections and its kinds) or a full accept queue. */
  connectionsRejected: number;
  /** Connections made to wait by max.connection.creation.rate (per listener too) before being served. */
  connectionsDelayed: number;
  /** Connections over their address's connection_creation_rate, closed after the wait it asked for. */
  connectionsThrottled: number;
  requestsHandled: number;
  handlerErrors: number;
  protocolErrors: number;
  /** TLS handshakes that failed (a plaintext client, an untrusted certificate, garbage). */
  tlsHandshakeFailures: number;
  /** SASL exchanges that failed (wrong credentials, unknown user, mechanism not enabled, out of order). */
  saslAuthenticationFailures: number;
  /** Connections closed for sending a request other than ApiVersions or SASL before authenticating (or after their session expired). */
  saslUnauthenticatedRequests: number;
  /** Response slabs allocated because none was free for reuse (fetched bytes, see SlabPool). */
  readonly responseSlabsAllocated: number;
}

export class NetworkServer<S> {
  private readonly servers: Server[] = [];
  private readonly tlsServers = new Map<string, TlsServer>();
  /** The addon's server contexts of TLS listeners, by listener name (replaced on reload). */
  private readonly nativeTlsContexts = new Map<string, NativeTlsContext>();
  /**
   * Where every TLS connection's socket reads ciphertext: each read is fed to its session in the
   * read's own callback (a copy), so one buffer serves them all.
   */
  private tlsCiphertext: Buffer | null = null;
  private readonly connections = new Set<Connection<S>>();
  /**
   * Connection counts and rates (Kafka's ConnectionQuotas): a connection takes its slots at TCP
   * accept, before a TLS handshake (as Kafka's acceptor counts it), and gives them back when it closes.
   */
  readonly connectionQuotas: ConnectionQuotas;
  /** Connections accepted and waiting out a connection creation rate, per listener, in order. */
  private readonly acceptQueues = new Map<string, GateEntry[]>();
  /** The connection at the head of a listener's gate, waiting out its delay. */
  private readonly acceptWaiting = new Map<string, { entry: GateEntry; timer: NodeJS.Timeout }>();
  /** Connections over their address's connection_creation_rate waiting to be closed (bounded by limits.connectionThrottledClosesMax). */
  private readonly throttled = new Set<Socket>();
  /** Sockets holding slots that are not connections yet (TLS handshakes): close() ends them. */
  private readonly pending = new Set<Socket>();
  /**
   * The connection_creation_rate client quota of an address (its own, else the default
   * address's), or null: set by the broker from its client quotas.
   */
  addressConnectionRate: ((address: string) => number | null) | null = null;
  private nextConnectionId = 0;
  /** Failed SASL connections waiting out their close delay (bounded by limits.saslDelayedClosesMax). */
  saslDelayedCloses = 0;
  /** Response memory (fetched record bytes), reused across the connections of this server. */
  readonly responseSlabs = new SlabPool(limits.responseSlabBytes, limits.responseSlabBytesMax, limits.responseSlabsFreeBytesMax);
  private slabTrimTimer: NodeJS.Timeout | null = null;
  readonly stats: NetworkStats = (() => {
    const slabs = this.responseSlabs;
    return {
      connectionsOpen: 0, connectionsAccepted: 0, connectionsRejected: 0, connectionsDelayed: 0, connectionsThrottled: 0, requestsHandled: 0, handlerErrors: 0, protocolErrors: 0, tlsHandshakeFailures: 0, saslAuthenticationFailures: 0, saslUnauthenticatedRequests: 0,
      get responseSlabsAllocated() { return slabs.slabsAllocated; },
    };
  })();
  bound: (ListenerSpec & { port: number })[] = [];
  /** Client quotas (set by the broker); none on a controller-only node. */
  throttle: ThrottleHook<S> | null = null;
  /** Requests, total time and error codes per API (Kafka's RequestMetrics), read by /metrics. */
  readonly requestMetrics = new RequestMetrics();
  /** Request frame buffers; classes from Node's own slab threshold to the preallocation limit. */
  readonly framePool = new BufferPool({
    classBytesMin: 4096, classBytesMax: limits.requestPreallocateBytesMax, pooledBytesMax: limits.framePoolBytesMax,
    poison: process.env['LOGLINE_DEBUG_POISON_FRAMES'] === '1',
  });

  constructor(
    readonly router: RequestChannel<S>,
    readonly services: S,
    readonly limitsConfig: NetworkLimits,
    readonly clock: Clock,
    readonly log: Logger,
    quotaWindow: QuotaWindow = QUOTA_WINDOW_DEFAULT,
  ) {
    this.connectionQuotas = new ConnectionQuotas(limitsConfig, quotaWindow, () => this.bound.length);
  }

  async listen(listeners: ListenerSpec[]): Promise<void> {
    this.slabTrimTimer ??= setInterval(() => this.responseSlabs.trimIfIdle(), limits.responseSlabsIdleMs).unref();
    for (const l of listeners) {
      const server = l.tls ? (nativeTlsAvailable() ? this.nativeTlsServer(l, l.tls) : this.tlsServer(l, l.tls))
        : createServer({ noDelay: true, pauseOnConnect: true }, (socket) => this.throughGate(l, socket, (rated) => { this.admitted(socket, l, () => this.accept(socket, l, 'User:ANONYMOUS', null), rated); }));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host: l.host, port: l.port, ...(this.limitsConfig.listenBacklog !== undefined ? { backlog: this.limitsConfig.listenBacklog } : {}) }, () => { server.off('error', reject); resolve(); });
      });
      server.on('error', (err) => this.log.error(`listener ${l.name}: ${err.message}`));
      this.servers.push(server);
      const address = server.address();
      this.bound.push({ ...l, port: typeof address === 'object' && address ? address.port : l.port });
    }
  }

  /**
   * A TLS listener: connections are handed over once the handshake is done; one whose client
   * certificate is offered but untrusted (ssl.client.auth=requested) or maps to no principal is
   * closed before any request is read.
   */
  private tlsServer(l: ListenerSpec, settings: ListenerTls): Server {
    const tls = createTlsServer({ ...settings.server, noDelay: true, handshakeTimeout: limits.tlsHandshakeTimeoutMs }, (socket) => {
      const principal = this.tlsPrincipal(socket, `${socket.remoteAddress}:${socket.remotePort}`, settings);
      if (principal === null) {
        this.stats.tlsHandshakeFailures++;
        socket.destroy();
        return;
      }
      this.accept(socket, l, principal, null);
    });
    tls.on('tlsClientError', (err, socket) => {
      this.stats.tlsHandshakeFailures++;
      this.log.warn(`listener ${l.name}: TLS handshake with ${socket.remoteAddress}:${socket.remotePort} failed: ${err.message}`);
      socket.destroy();
    });
    this.tlsServers.set(l.name, tls);
    // The TLS server does not listen itself: TCP connections are accepted here, go through the
    // creation rates and take their slots (given back when they close) before it is handed each
    // one to shake hands on, as a net.Server's 'connection' event hands it over.
    return createServer({ noDelay: true, pauseOnConnect: true }, (raw) => this.throughGate(l, raw, (rated) => {
      this.admitted(raw, l, () => {
        tls.emit('connection', raw);
        return raw;
      }, rated);
    }));
  }

  /**
   * A TLS listener on the addon: a plain TCP server whose connections are handed over once the
   * handshake (driven by what each socket read brings) is done, under the same rules as above.
   */
  private nativeTlsServer(l: ListenerSpec, settings: ListenerTls): Server {
    this.nativeTlsContexts.set(l.name, new NativeTlsContext(settings));
    return createServer({ noDelay: true, pauseOnConnect: true }, (accepted) => this.throughGate(l, accepted, (rated) => { this.admitted(accepted, l, () => this.nativeHandshake(accepted, l), rated); }));
  }

  /** The handshake of a connection on an addon TLS listener; the socket that now stands for it (null: closed). */
  private nativeHandshake(accepted: Socket, l: ListenerSpec): Socket | null {
    const settings = this.bound.find((b) => b.name === l.name)?.tls ?? l.tls!;
    const where = `${accepted.remoteAddress}:${accepted.remotePort}`;
    let session: NativeTlsSession;
    try {
      session = new NativeTlsSession(this.nativeTlsContexts.get(l.name)!);
    } catch (err) {
      this.log.error(`listener ${l.name}: TLS session for ${where}: ${(err as Error).message}`);
      accepted.destroy();
      return null;
    }
    const transport = new NativeTlsTransport(accepted, session, this.tlsCiphertext ??= Buffer.allocUnsafe(limits.tlsCiphertextReadBytes));
    const socket = transport.socket;
    let settled = false;
    const fail = (why: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      this.stats.tlsHandshakeFailures++;
      if (why !== null) this.log.warn(`listener ${l.name}: TLS handshake with ${where} failed: ${why}`);
      transport.destroy();
    };
    const timer = setTimeout(() => fail('timed out'), limits.tlsHandshakeTimeoutMs);
    timer.unref();
    const gone = () => fail(null);
    socket.on('error', gone);
    socket.on('close', gone);
    transport.onCiphertext = () => {
      let done: boolean;
      try {
        done = session.handshake();
      } catch (err) {
        // The alert OpenSSL queued for the client goes out before the socket closes.
        transport.flush();
        fail((err as Error).message);
        return false;
      }
      try {
        if (!transport.flush()) {
          fail('not reading what it is sent');
          return false;
        }
        if (!done) return true;
        settled = true;
        clearTimeout(timer);
        socket.off('error', gone);
        socket.off('close', gone);
        const principal = this.tlsPrincipal(session.peer(), where, settings);
        if (principal === null) {
          this.stats.tlsHandshakeFailures++;
          transport.destroy();
          return false;
        }
        this.accept(socket, l, principal, transport);
        return true;
      } catch (err) {
        // Not expected (the peer's certificate, an output buffer): this connection, not the process.
        this.log.error(`listener ${l.name}: after the TLS handshake with ${where}: ${(err as Error).stack ?? String(err)}`);
        settled = true;
        transport.destroy();
        return false;
      }
    };
    return socket;
  }

  private tlsPrincipal(socket: TLSSocket | NativeTlsPeer, remote: string, settings: ListenerTls): string | null {
    const peer = tlsPeerPrincipal(socket, settings.clientAuth, settings.principalRules);
    if ('refused' in peer) {
      const where = `TLS client ${remote}`;
      if (peer.why === 'untrusted') this.log.warn(`${where} ${peer.refused}`);
      else if (peer.why === 'unmapped') this.log.warn(`${where}: ${peer.refused}`);
      return null;
    }
    if (peer.dn !== null) this.log.info(`TLS client ${remote} authenticated as ${peer.principal} (${peer.dn})`);
    return peer.principal;
  }

  /**
   * New keystore/truststore for a TLS listener (a dynamic change of its ssl.keystore.location):
   * connections made from now on get the new certificate, open ones keep theirs.
   */
  reloadTls(listenerName: string, settings: ListenerTls): void {
    const server = this.tlsServers.get(listenerName);
    if (this.nativeTlsContexts.has(listenerName)) this.nativeTlsContexts.set(listenerName, new NativeTlsContext(settings));
    else if (server !== undefined) server.setSecureContext(settings.server);
    else throw new Error(`no TLS listener ${listenerName}`);
    const bound = this.bound.find((b) => b.name === listenerName);
    if (bound) bound.tls = settings;
  }

  /**
   * New connection limits (a dynamic change of max.connections, max.connections.per.ip, its
   * overrides, max.connection.creation.rate or their listener.name.<l>. forms): they apply to
   * connections made from now on; open ones stay, as in Kafka.
   */
  setConnectionLimits(update: Partial<ConnectionLimits>): void {
    this.connectionQuotas.setLimits(update);
    this.closeExcessConnections();
  }

  /**
   * A connection just accepted on `l` is let through (`go`) at the listener's and the broker's
   * connection creation rates: at once while neither applies, else in order, each after the wait
   * its rate asks for (Kafka's acceptor waits the same way). `go` learns whether the rates counted
   * it. A connection that leaves meanwhile is skipped (a paused socket may only be noticed then).
   */
  private throughGate(l: ListenerSpec, socket: Socket, go: (rated: boolean) => void): void {
    let queue = this.acceptQueues.get(l.name);
    if ((queue === undefined || queue.length === 0) && !this.acceptWaiting.has(l.name) && !this.connectionQuotas.rateLimited(l.name)) {
      go(false);
      return;
    }
    if (queue === undefined) this.acceptQueues.set(l.name, queue = []);
    if (queue.length >= limits.connectionsAcceptQueuedMax) {
      this.stats.connectionsRejected++;
      socket.destroy();
      return;
    }
    queue.push({ socket, go });
    if (!this.acceptWaiting.has(l.name)) this.pumpGate(l.name);
  }

  private pumpGate(listener: string): void {
    const queue = this.acceptQueues.get(listener)!;
    const pass = (entry: GateEntry) => {
      try {
        entry.go(true);
      } catch (err) {
        // Not expected (a socket that failed as it was handed over): that connection, not the gate.
        this.log.error(`listener ${listener}: accepting a connection: ${(err as Error).stack ?? String(err)}`);
        entry.socket.destroy();
      }
    };
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      if (next.socket.destroyed) continue;
      const waitMs = this.connectionQuotas.acceptThrottleMs(listener, this.clock.nowMs());
      if (waitMs <= 0) {
        pass(next);
        continue;
      }
      this.stats.connectionsDelayed++;
      const entry = next;
      const timer = setTimeout(() => {
        this.acceptWaiting.delete(listener);
        if (!entry.socket.destroyed) pass(entry);
        this.pumpGate(listener);
      }, waitMs);
      this.acceptWaiting.set(listener, { entry, timer });
      return;
    }
  }

  /**
   * Takes the slots of a connection from `socket`'s address on `l` and runs `serve`, which returns
   * the socket whose close gives them back (null: closed already). A connection over its address's
   * connection_creation_rate is closed after the wait it asks for and not counted (nor, when
   * `rated`, by the accept rates that let it through, as Kafka un-records it); one over a count is
   * closed at once: false then.
   */
  private admitted(socket: Socket, l: ListenerSpec, serve: () => Socket | null, rated: boolean): boolean {
    const address = connectionAddress(socket.remoteAddress ?? 'unknown');
    const nowMs = this.clock.nowMs();
    const throttleMs = this.connectionQuotas.addressThrottleMs(address, this.addressConnectionRate?.(address) ?? null, nowMs);
    if (throttleMs > 0) {
      if (rated) this.connectionQuotas.unrecordAccept(l.name, nowMs);
      this.stats.connectionsThrottled++;
      this.log.debug?.(`listener ${l.name}: ${address} over its connection_creation_rate, closing ${socket.remotePort} in ${throttleMs} ms`);
      if (this.throttled.size >= limits.connectionThrottledClosesMax) {
        socket.destroy();
      } else {
        this.throttled.add(socket);
        setTimeout(() => { this.throttled.delete(socket); socket.destroy(); }, throttleMs).unref();
      }
      return false;
    }
    const full = this.connectionQuotas.admit(address, l.name);
    if (full !== null) {
      this.stats.connectionsRejected++;
      this.log.debug?.(`listener ${l.name}: refused ${address}:${socket.remotePort} (${full})`);
      socket.destroy();
      return false;
    }
    let released = false;
    let held: Socket | null = null;
    const release = () => {
      if (released) return;
      released = true;
      if (held !== null) this.pending.delete(held);
      this.connectionQuotas.release(address, l.name);
    };
    try {
      held = serve();
    } catch (err) {
      release();
      socket.destroy();
      throw err;
    }
    if (held === null || held.destroyed) {
      release();
    } else {
      held.once('close', release);
      // close() ends it too, should it still be in its TLS handshake then.
      this.pending.add(held);
    }
    if (this.connectionQuotas.excess() > 0) this.closeExcessConnections();
    return true;
  }

  /**
   * Kafka's Processor.closeExcessConnections: while more connections are open than
   * max.connections allows (after it was lowered, or once the inter-broker listener, which may go
   * past it, took slots), the least recently active ones of the other listeners are closed.
   */
  private closeExcessConnections(): void {
    let excess = this.connectionQuotas.excess();
    if (excess <= 0) return;
    const protectedListener = this.connectionQuotas.protectedListener();
    const candidates = [...this.connections].filter((c) => c.listenerName !== protectedListener).sort((a, b) => a.lastActiveMs - b.lastActiveMs);
    for (const c of candidates) {
      if (excess-- <= 0) break;
      this.log.info(`closing ${c.id}, the least recently active, over max.connections`);
      c.destroy();
    }
  }

  /** Serves a connection that holds its slots; the socket whose close ends it. */
  private accept(socket: Socket, listener: ListenerSpec, principal: string, tls: NativeTlsTransport | null): Socket {
    const ip = socket.remoteAddress ?? 'unknown';
    this.stats.connectionsAccepted++;
    this.stats.connectionsOpen++;
    const id = `${listener.name}-${ip}:${socket.remotePort}-${this.nextConnectionId++}`;
    const conn = new Connection(this, socket, listener, id, principal, tls);
    this.connections.add(conn);
    this.log.debug?.(`connection ${id} opened (principal ${principal})`);
    conn.socket.once('close', () => {
      this.log.debug?.(`connection ${id} closed`);
      this.connections.delete(conn);
      this.stats.connectionsOpen--;
    });
    return conn.socket;
  }

  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes every connection. */
  async close(graceMs = 5000): Promise<void> {
    // net.Server#close only calls back once every connection is gone, so stop accepting first,
    // let in-flight requests finish, close the connections, and only then wait for the callbacks.
    const closed = Promise.all(this.servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    if (this.slabTrimTimer) clearInterval(this.slabTrimTimer);
    this.slabTrimTimer = null;
    // Connections still waiting out a connection creation rate are not served; those waiting to be
    // closed and handshakes in progress are closed now.
    for (const { entry, timer } of this.acceptWaiting.values()) {
      clearTimeout(timer);
      entry.socket.destroy();
    }
    this.acceptWaiting.clear();
    for (const queue of this.acceptQueues.values()) for (const { socket } of queue.splice(0)) socket.destroy();
    for (const socket of this.throttled) socket.destroy();
    const deadline = Date.now() + graceMs;
    while ([...this.connections].some((c) => c.busy) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    for (const c of this.connections) c.destroy();
    // Sockets still in their TLS handshake.
    for (const socket of this.pending) socket.destroy();
    await closed;
  }
}

/**
 * The accepted socket's handle in a new Socket that reads into buffers we choose. net.Server has
 * no `onread` option (net.connect has), so the handle of the paused socket is moved over; the old
 * object is destroyed without its handle, which also settles the server's connection count.
 * Falls back to the socket as it is (with 'data' events) where the handle is not reachable.
 */
function adoptSocket(accepted: Socket, onread: { buffer: () => Buffer; callback: (n: number) => boolean }): { socket: Socket; onread: boolean } {
  const raw = accepted as unknown as { _handle?: object | null };
  if (!raw._handle) return { socket: accepted, onread: false };
  const socket = new Socket({ handle: raw._handle, onread, allowHalfOpen: false } as ConstructorParameters<typeof Socket>[0]);
  raw._handle = null;
  accepted.destroy();
  return { socket, onread: true };
}

/**
 * A socket whose TLS session runs in the addon: the socket reads ciphertext into `ciphertext`,
 * which is fed to the session before `onCiphertext` decides what to decrypt (the handshake, then
 * the connection's reads); `flush` sends what the session has for the client.
 */
class NativeTlsTransport {
  readonly socket: Socket;
  /** Called after each read was fed to the session; false stops reading. */
  onCiphertext: () => boolean = () => true;
  private closed = false;

  constructor(accepted: Socket, readonly session: NativeTlsSession, private readonly ciphertext: Buffer) {
    const adopted = adoptSocket(accepted, {
      buffer: () => this.ciphertext,
      callback: (n) => {
        if (this.closed) return false;
        try {
          this.session.feed(this.ciphertext, 0, n);
        } catch {
          this.destroy();
          return false;
        }
        return this.onCiphertext();
      },
    });
    this.socket = adopted.socket;
    this.socket.once('close', () => this.release());
    if (!adopted.onread) this.destroy();
  }

  /**
   * Sends what the session has for the client (handshake messages, alerts, answers to a key
   * update). False when the client has left more than limits.socketWriteBufferBytesMax unread:
   * records that only make the session answer (renegotiation attempts, key updates) would
   * otherwise grow the write buffer without bound.
   */
  flush(): boolean {
    if (this.closed) return true;
    const out = this.session.output();
    if (out !== null) this.socket.write(out);
    return this.socket.writableLength <= limits.socketWriteBufferBytesMax;
  }

  /** Ends the connection with a close_notify. */
  end(): void {
    if (this.closed) return;
    this.session.shutdown();
    const out = this.session.output();
    if (out !== null) this.socket.end(out); else this.socket.end();
  }

  /**
   * Encrypts `chunks` (one response) into response slabs and sends them, a piece of at most
   * limits.tlsEncryptPieceBytes at a time: each piece goes to the socket before the next is
   * encrypted, so the client decrypts the start of a large fetch response while the rest is being
   * encrypted (plaintext responses reach the socket at once). One lease per response: its slabs
   * are reused once the socket has taken the last piece.
   */
  write(chunks: readonly Buffer[], slabs: SlabPool): void {
    if (this.closed) return;
    const lease = new SlabLease(slabs);
    const alloc = (bytes: number) => lease.alloc(bytes);
    const pieceMax = limits.tlsEncryptPieceBytes;
    let piece: Buffer[] = [];
    let pieceBytes = 0;
    const send = (last: boolean) => {
      const records = this.session.encrypt(piece, alloc);
      if (last) {
        this.socket.write(records, () => lease.release());
      } else {
        this.socket.write(records);
        // The connection corks the socket for the rest of the tick (to send answers that finish
        // together in one write): a piece ahead of the last goes now.
        if (this.socket.writableCorked > 0) {
          this.socket.uncork();
          this.socket.cork();
        }
      }
      piece = [];
      pieceBytes = 0;
    };
    try {
      for (const chunk of chunks) {
        for (let at = 0; at < chunk.length;) {
          const take = Math.min(chunk.length - at, pieceMax - pieceBytes);
          piece.push(take === chunk.length ? chunk : chunk.subarray(at, at + take));
          pieceBytes += take;
          at += take;
          if (pieceBytes === pieceMax) send(false);
        }
      }
      send(true);
    } catch (err) {
      // Pieces already written hold slabs the socket may still read: keep them out of the pool.
      this.destroy();
      throw err;
    }
  }

  destroy(): void {
    this.socket.destroy();
    this.release();
  }

  private release(): void {
    if (this.closed) return;
    this.closed = true;
    this.session.close();
  }
}

class Connection<S> {
  readonly socket: Socket;
  /** When a request last came (or the connection opened): the least recently active go first past max.connections. */
  lastActiveMs: number;
  private readonly splitter: FrameSplitter;
  private readonly queue: Slot[] = [];
  /** Frames read but not yet dispatched because the connection is at its in-flight limit. */
  private readonly waiting: Buffer[] = [];
  private paused = false;
  private closed = false;
  private corked = false;
  /** Set while the connection is muted for a quota (KIP-219): nothing more is read or dispatched. */
  private muteTimer: NodeJS.Timeout | null = null;
  private mutedUntilMs = 0;
  private sasl: SaslServerSession | null = null;
  /** The client sent its TLS close_notify (the addon's sessions). */
  private peerClosedTls = false;
  /** A failed SASL exchange was answered: nothing more is read, the connection closes after the delay. */
  private saslFailed = false;

  private readonly remoteAddress: string;

  constructor(
    private readonly server: NetworkServer<S>,
    accepted: Socket,
    private readonly listener: ListenerSpec,
    readonly id: string,
    /** The connection's principal: from its TLS certificate, or set when it authenticates over SASL. */
    private principal: string,
    /** Its TLS session in the addon, on a TLS listener where the addon is built. */
    private readonly tls: NativeTlsTransport | null = null,
  ) {
    const pool = server.framePool;
    this.lastActiveMs = server.clock.nowMs();
    this.splitter = new FrameSplitter(server.limitsConfig.requestBytesMax, Math.min(server.limitsConfig.requestBytesMax, limits.requestPreallocateBytesMax), (n) => pool.allocate(n));
    this.remoteAddress = accepted.remoteAddress ?? 'unknown';
    if (listener.sasl) {
      this.sasl = new SaslServerSession(listener.sasl.settings, listener.sasl.inputs);
      this.splitter.limitFrameBytes(Math.min(server.limitsConfig.requestBytesMax, limits.saslTokenBytesMax));
    }
    // A node:tls socket's reads belong to its TLS layer: its decrypted bytes come as 'data' chunks.
    const adopted = tls !== null ? { socket: tls.socket, onread: true }
      : listener.tls ? { socket: accepted, onread: false } : adoptSocket(accepted, { buffer: () => this.splitter.readBuffer(), callback: (n) => this.onRead(n) });
    const socket = this.socket = adopted.socket;
    socket.setNoDelay(true);
    socket.setTimeout(server.limitsConfig.idleMs);
    socket.on('timeout', () => { if (this.queue.length === 0) this.destroy(); });
    if (!adopted.onread) {
      socket.on('data', (chunk) => this.onData(chunk));
      socket.resume();
    }
    socket.on('drain', () => { this.dispatchWaiting(); this.maybeResume(); });
    socket.on('error', () => this.destroy());
    socket.on('close', () => { this.closed = true; });
    if (tls !== null) {
      tls.onCiphertext = () => this.decrypt();
      // Requests that came with the end of the handshake are decrypted already.
      this.decrypt();
    }
  }

  /**
   * Everything the TLS session can decrypt from what was fed, into the request buffers. All of it
   * is taken (frames beyond the in-flight limit wait in `waiting`, as with plaintext reads), so
   * nothing is left in the session while the socket is paused.
   */
  private decrypt(): boolean {
    const tls = this.tls!;
    for (;;) {
      if (this.closed) return false;
      let n: number;
      try {
        n = tls.session.read(this.splitter.readBuffer());
      } catch (err) {
        this.server.log.warn(`closing ${this.id}: ${(err as Error).message}`);
        tls.flush();
        this.destroy();
        return false;
      }
      // A close_notify, a key update or an alert may want an answer.
      if (!tls.flush()) {
        this.server.log.warn(`closing ${this.id}: TLS output unread past ${limits.socketWriteBufferBytesMax} bytes`);
        this.destroy();
        return false;
      }
      if (n < 0) {
        // The client's close_notify: ours goes back, and reading goes on until its FIN (nothing
        // more is decrypted), which closes the socket; stopping here would hold the connection,
        // and its slots, until connections.max.idle.ms.
        if (!this.peerClosedTls) {
          this.peerClosedTls = true;
          this.end();
        }
        return true;
      }
      if (n === 0) return true;
      if (!this.onRead(n)) return false;
    }
  }

  get busy(): boolean { return this.queue.length > 0 || this.waiting.length > 0; }

  get listenerName(): string { return this.listener.name; }

  /** Ends the connection after what was written (with a TLS close_notify on the addon's sessions). */
  private end(): void {
    if (this.tls !== null) this.tls.end(); else this.socket.end();
  }

  destroy(): void {
    this.closed = true;
    if (this.muteTimer !== null) clearTimeout(this.muteTimer);
    if (this.tls !== null) this.tls.destroy(); else this.socket.destroy();
  }

  /**
   * A throttled client (KIP-219): its response has gone or goes now, and the connection reads no
   * more requests for `ms` (a longer throttle extends it). Kafka mutes the channel the same way.
   */
  mute(ms: number): void {
    if (ms <= 0 || this.closed) return;
    const untilMs = this.server.clock.nowMs() + ms;
    if (this.muteTimer !== null) {
      if (untilMs <= this.mutedUntilMs) return;
      clearTimeout(this.muteTimer);
    }
    this.mutedUntilMs = untilMs;
    this.muteTimer = setTimeout(() => {
      this.muteTimer = null;
      this.dispatchWaiting();
      this.maybeResume();
    }, ms);
    this.maybePause();
  }

  private onData(chunk: Buffer): void {
    let frames: Buffer[];
    try {
      frames = this.splitter.push(chunk);
    } catch (err) {
      this.server.stats.protocolErrors++;
      this.destroy();
      return;
    }
    this.enqueue(frames);
  }

  /** `n` bytes were read into the splitter's read buffer. Returns false to stop reading. */
  private onRead(n: number): boolean {
    if (this.closed) return false;
    let frames: Buffer[];
    try {
      frames = this.splitter.pushRead(n);
    } catch (err) {
      this.server.stats.protocolErrors++;
      this.destroy();
      return false;
    }
    this.enqueue(frames);
    return true;
  }

  private enqueue(frames: Buffer[]): void {
    for (const frame of frames) this.waiting.push(frame);
    this.dispatchWaiting();
    this.maybePause();
  }

  private dispatchWaiting(): void {
    // Requests already read (a client pipelining many) wait too while the client does not take
    // its responses: pausing the socket alone would still answer every one of them into memory.
    while (this.waiting.length > 0 && !this.closed && this.muteTimer === null && this.queue.length < this.server.limitsConfig.inFlightPerConnectionMax
      && !this.writeBacklogged()) {
      this.dispatch(this.waiting.shift()!);
    }
  }

  private dispatch(frame: Buffer): void {
    this.lastActiveMs = this.server.clock.nowMs();
    if (this.saslFailed) return;
    if (this.sasl && this.sasl.expectsRawToken) {
      this.saslRawToken(frame);
      return;
    }
    let decoded;
    try {
      decoded = decodeRequestHeader(frame);
    } catch (err) {
      this.server.stats.protocolErrors++;
      this.destroy();
      return;
    }
    const { header, bodyOffset } = decoded;
    if (this.sasl && !this.saslGate(header.requestApiKey)) return;
    const slot: Slot = { chunks: null, done: false, lease: null, start: null };
    this.queue.push(slot);
    // Handled now, a Metadata request pipelined behind a produce that waits for acks=all would be
    // answered with the leaders of when it came, sent only once that produce is answered, after
    // leaderships may have moved: librdkafka 2.0 (no leader epochs) took such an answer for news,
    // moved a partition back to its deposed leader and, as the migration crossed the next fresh
    // answer, never off it again (NOT_LEADER_OR_FOLLOWER until message.timeout.ms).
    if (this.queue.length > 1 && this.server.router.inTurn?.(header.requestApiKey) === true) {
      const cameMs = this.lastActiveMs;
      slot.start = () => this.handle(slot, frame, header, bodyOffset, cameMs);
      return;
    }
    this.handle(slot, frame, header, bodyOffset, this.lastActiveMs);
  }

  /** Routes a request (read at `cameMs`) whose slot is in the queue, and completes the slot with its answer. */
  private handle(slot: Slot, frame: Buffer, header: RequestHeader, bodyOffset: number, cameMs: number): void {
    const ctx: NetworkRequestContext<S> = {
      header, apiVersion: header.requestApiVersion, connectionId: this.id,
      clientAddress: this.remoteAddress, listenerName: this.listener.name,
      securityProtocol: this.listener.securityProtocol, principal: this.principal,
      nowMs: cameMs, services: this.server.services,
      sasl: this.sasl ?? undefined,
      responseBytes: (bytes) => (slot.lease ??= new SlabLease(this.server.responseSlabs)).alloc(bytes),
    };
    const startedMs = performance.now();
    const routed = this.server.router.route(header, frame, bodyOffset, ctx);
    // Handling time as request_percentage counts it: the synchronous work of decoding and
    // handling, not the time a request waits (a long-polling fetch costs nothing).
    const handlerMs = performance.now() - startedMs;
    // SASL requests are handled synchronously, so the session's state is settled before the next frame.
    const saslStep = this.sasl !== null && (header.requestApiKey === 17 || header.requestApiKey === 36);
    if (saslStep) this.afterSasl();
    routed.then((outcome) => {
      this.server.stats.requestsHandled++;
      if (outcome.kind === 'close') {
        slot.lease?.release();
        this.server.stats.protocolErrors++;
        this.server.log.warn(`closing ${this.id}: ${outcome.reason}`);
        this.destroy();
        return;
      }
      const throttle = this.server.throttle;
      if (throttle !== null) {
        try {
          this.mute(throttle(ctx, header.requestApiKey, outcome.request, frame.length, handlerMs, outcome.kind === 'response' ? outcome.body : null));
        } catch (err) {
          this.onHandlerError(slot, header, err);
          return;
        }
      }
      if (outcome.kind === 'response') {
        try {
          slot.chunks = encodeResponseFrame(outcome.apiKey, outcome.version, header.correlationId, outcome.body);
          this.server.requestMetrics.record(outcome.apiKey, outcome.version, performance.now() - startedMs, outcome.body);
        } catch (err) {
          // Thrown here it would be an unhandled rejection (the process exits) and the slot would
          // never complete; a body the encoder refuses is a handler bug like any other.
          this.onHandlerError(slot, header, err);
          return;
        }
      }
      // acks=0 produces get no response but are requests all the same.
      else this.server.requestMetrics.record(header.requestApiKey, header.requestApiVersion, performance.now() - startedMs, null);
      if (outcome.frameDone) this.server.framePool.release(frame);
      slot.done = true;
      this.flush();
      if (saslStep && this.saslFailed) this.closeAfterAuthenticationFailure();
    }, (err: unknown) => this.onHandlerError(slot, header, err));
  }

  /** Whether a request of `apiKey` may be served on this SASL connection now; if not, it is closed. */
  private saslGate(apiKey: number): boolean {
    const now = this.server.clock.nowMs();
    if (this.sasl!.allows(apiKey, now)) return true;
    this.server.stats.saslUnauthenticatedRequests++;
    this.server.log.warn(`closing ${this.id}: API ${apiKey} before SASL authentication${this.sasl!.authenticated ? ' (session expired, KIP-368)' : ''}`);
    this.destroy();
    return false;
  }

  /** After a SASL step: the principal of a finished exchange, or the end of a failed one. */
  private afterSasl(): void {
    const sasl = this.sasl!;
    if (sasl.failed) {
      this.saslFailed = true;
      this.server.stats.saslAuthenticationFailures++;
      this.socket.pause();
      return;
    }
    if (sasl.authenticated && this.principal !== sasl.principal) {
      this.principal = sasl.principal;
      this.server.log.info(`SASL client ${this.id} authenticated as ${this.principal}`);
    }
    if (sasl.authenticated) this.splitter.limitFrameBytes(this.server.limitsConfig.requestBytesMax);
  }

  /** A raw token after SaslHandshake v0 (clients from before SaslAuthenticate): answered raw, in order. */
  private saslRawToken(frame: Buffer): void {
    const reply = this.sasl!.rawToken(frame, this.server.clock.nowMs());
    if (reply === null) {
      // v0 has no error response: the connection closes (after the delay).
      this.afterSasl();
      this.closeAfterAuthenticationFailure();
      return;
    }
    const size = Buffer.alloc(4);
    size.writeUInt32BE(reply.length);
    this.queue.push({ chunks: [size, reply], done: true, lease: null, start: null });
    this.afterSasl();
    this.flush();
  }

  private closeAfterAuthenticationFailure(): void {
    const delayMs = this.listener.sasl?.failedAuthenticationDelayMs ?? 0;
    if (delayMs <= 0 || this.server.saslDelayedCloses >= limits.saslDelayedClosesMax) {
      // Let the written answer leave before the socket goes.
      this.end();
      setTimeout(() => this.destroy(), 1000).unref();
      return;
    }
    this.server.saslDelayedCloses++;
    setTimeout(() => {
      this.server.saslDelayedCloses--;
      this.end();
      setTimeout(() => this.destroy(), 1000).unref();
    }, delayMs).unref();
  }

  /** An exception out of a handler (or its response's encoding) is a bug: log it, count it, close only this connection. */
  private onHandlerError(slot: Slot, header: { requestApiKey: number; requestApiVersion: number }, err: unknown): void {
    this.server.stats.handlerErrors++;
    slot.lease?.release();
    const what = err instanceof ProtocolError ? 'encode' : 'handler';
    this.server.log.error(`${what} error on API ${header.requestApiKey} v${header.requestApiVersion} from ${this.id}: ${err instanceof Error ? err.stack : String(err)}`);
    this.destroy();
  }

  private flush(): void {
    while (this.queue.length > 0 && this.queue[0]!.done) {
      const slot = this.queue.shift()!;
      const lease = slot.lease;
      if (slot.chunks && !this.closed) {
        this.corkUntilNextTick();
        const last = slot.chunks.length - 1;
        // The leased bytes are reused once the socket has taken them: the write callback comes
        // after the kernel copied them (or with an error once the socket is gone).
        if (this.tls !== null) {
          // Encrypting copies the response: its leased bytes are free at once.
          try {
            this.tls.write(slot.chunks, this.server.responseSlabs);
          } catch (err) {
            this.server.log.warn(`closing ${this.id}: ${(err as Error).message}`);
            this.destroy();
          }
          lease?.release();
        } else {
          slot.chunks.forEach((c, i) => this.socket.write(c, i === last && lease ? () => lease.release() : undefined));
        }
      } else {
        lease?.release();
      }
    }
    // Every request before it is answered: one handled in turn starts now.
    const head = this.queue[0];
    if (head?.start != null && !this.closed) {
      const start = head.start;
      head.start = null;
      start();
    }
    this.dispatchWaiting();
    this.maybeResume();
  }

  /**
   * Responses finished in the same turn of the event loop (pipelined requests answered together)
   * leave in one write instead of a syscall each; the socket is uncorked once the current
   * microtasks have run, so no response waits for later I/O.
   */
  private corkUntilNextTick(): void {
    if (this.corked) return;
    this.corked = true;
    this.socket.cork();
    process.nextTick(() => { this.corked = false; this.socket.uncork(); });
  }

  private overloaded(): boolean {
    return this.waiting.length > 0
      || this.muteTimer !== null
      || this.queue.length >= this.server.limitsConfig.inFlightPerConnectionMax
      || this.writeBacklogged();
  }

  /** More response bytes queued on the socket than the kernel has taken than a slow reader may hold here. */
  private writeBacklogged(): boolean {
    return this.socket.writableLength > limits.socketWriteBufferBytesMax;
  }

  private maybePause(): void {
    if (!this.paused && this.overloaded()) {
      this.paused = true;
      this.socket.pause();
    }
  }

  private maybeResume(): void {
    if (this.paused && !this.overloaded() && !this.closed) {
      this.paused = false;
      this.socket.resume();
    }
  }
}

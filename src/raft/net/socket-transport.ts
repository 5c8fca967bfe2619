// A RaftTransport on node:net speaking Kafka's own RPCs (see messages.ts). Each node listens on
// one port; requests to a peer go on one outgoing connection to it (opened on demand, opened again
// after it fails), responses come back on the connection their request arrived on. Responses are
// matched by correlation id rather than by order: a leader parks a Fetch for up to fetchMaxWaitMs,
// and a Vote on the same connection must not wait behind it. Everything a peer can grow is capped:
// frame size, requests pending per connection, bytes queued on a socket.
import { createServer, connect, isIP, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, connect as connectTls, type ConnectionOptions, type TlsOptions } from 'node:tls';
import {
  FrameSplitter, decodeRequest as decodeWireRequest, decodeRequestHeader, decodeResponse as decodeWireResponse, encodeRequestFrame,
  encodeResponseFrame, peekCorrelationId, type AddRaftVoterRequest, type RemoveRaftVoterRequest, type RequestHeader,
} from '../../protocol/index.js';
import { limits } from '../../util/index.js';
import type { Envelope, NodeId, RaftRequest } from '../core/types.js';
import type { RaftTransport, TransportInbox, VoterAddress, VoterChange } from '../transport.js';
import {
  ApiKey, EncodedRanges, apiKeyOf, apiVersion, decodeRequest, decodeResponse, encodeDescribeQuorum, encodeRequest, encodeResponse, fetchBytesMax,
} from './messages.js';

export const socketTransportLimits = {
  /** Largest frame accepted from a peer: a full fetch response plus headroom. */
  frameBytesMax: fetchBytesMax + (1 << 20),
  /** Requests a peer may have open with us on one connection (a fetch parks; votes do not). */
  inboundPendingPerConnectionMax: 64,
  /** Requests we keep open towards one peer; beyond this a send fails at once. */
  outboundPendingPerPeerMax: 256,
  /** Response entries accepted in one fetch. */
  fetchEntriesMax: 1 << 20,
  /** Bytes queued on a socket the peer does not read before we drop the connection. */
  socketWriteBufferBytesMax: limits.socketWriteBufferBytesMax,
} as const;

export interface SocketTransportOptions {
  readonly nodeId: NodeId;
  readonly clusterId: string;
  /** Where this node listens (port 0: any free port, see `port`). */
  readonly host: string;
  readonly port: number;
  readonly voters: readonly VoterAddress[];
  readonly requestTimeoutMs: number;
  readonly connectTimeoutMs?: number;
  /** Called with a reason when a peer's connection is dropped for bad input. */
  readonly onProtocolError?: (reason: string) => void;
  /** The controller listener speaks TLS (security protocol SSL): how to serve it and how to reach the other voters. */
  readonly tls?: { readonly server?: TlsOptions; readonly client: ConnectionOptions };
  /**
   * The controller listener authenticates (SASL): each outgoing connection logs in first (`login`).
   * Each incoming connection gets a gate (`gate`, given the socket once any TLS handshake is done),
   * which knows its principal (client certificate or SASL), answers the SASL exchange and refuses
   * what the principal may not do; or refuses the connection. This room only carries the exchange;
   * what it means is the caller's (src/node/controller-listener.ts).
   */
  readonly login?: () => PeerLogin;
  readonly gate?: (socket: Socket) => InboundGate | { refused: string };
}

/** A login exchange of Kafka requests run on a new outgoing connection before anything else. */
export interface PeerLogin {
  start(): { apiKey: number; version: number; body: object };
  /** The next request after a response, or done; throws when refused. */
  next(response: Record<string, any>): { apiKey: number; version: number; body: object } | { done: true };
}

/** What an incoming connection may do before (and after) it has logged in, and who it is. */
export interface InboundGate {
  /** `User:<name>` the connection's requests run as now (User:ANONYMOUS before any authentication). */
  readonly principal: string;
  admit(header: RequestHeader, frame: Buffer, bodyOffset: number): { kind: 'pass' } | { kind: 'answer'; chunks: Buffer[]; thenClose: boolean } | { kind: 'close'; reason: string };
}

/**
 * Requests on this listener that are not the quorum's own (the controller's APIs: registrations,
 * heartbeats, topic changes forwarded by brokers, ApiVersions), with the client's IP address and the
 * connection's principal (its gate's, else User:ANONYMOUS): the response frame's chunks, or null
 * to close the connection (a malformed request).
 */
export type OtherRequests = (header: RequestHeader, frame: Buffer, bodyOffset: number, clientAddress: string, principal: string) => Promise<Buffer[] | null>;

interface OutboundPending {
  readonly request: RaftRequest;
  readonly apiKey: number;
  readonly sentMs: number;
}

class Peer {
  /** Requests written before the connection is up wait in net.Socket's own queue. */
  socket: Socket | undefined;
  /** Requests waiting for the connection's login to finish (null: logged in, or no login). */
  queued: Buffer[][] | null = null;
  readonly pending = new Map<number, OutboundPending>();
  constructor(readonly address: VoterAddress) {}
}

interface InboundConnection {
  readonly socket: Socket;
  /** correlation id -> api key and version of requests waiting for the core's answer. */
  readonly pending: Map<number, { apiKey: number; version: number }>;
  /**
   * The answers to every request but the Raft RPCs, in arrival order: they go out in that order, as
   * Kafka clients expect of a connection (the Raft RPCs' answers are matched by correlation id).
   */
  readonly answersInTurn: { chunks: Buffer[] | null }[];
  readonly gate: InboundGate | undefined;
}

export class SocketTransport implements RaftTransport {
  private server: Server | undefined;
  private inbox: TransportInbox | undefined;
  private readonly peers = new Map<NodeId, Peer>();
  /** `${from}:${correlationId}` -> the connection a request came in on. */
  private readonly inboundByKey = new Map<string, InboundConnection>();
  private readonly inbound = new Set<InboundConnection>();
  /** Fetch answers to several followers often carry the same range: encoded once (this node's log only). */
  private readonly encodedRanges = new EncodedRanges();
  private sweepTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private boundPort = 0;
  private otherRequests: OtherRequests | undefined;

  constructor(private readonly opts: SocketTransportOptions) {
    for (const v of opts.voters) if (v.nodeId !== opts.nodeId) this.peers.set(v.nodeId, new Peer(v));
  }

  /** The port actually bound (useful with port 0). */
  get port(): number { return this.boundPort; }

  /** Serves the controller's APIs on this listener too (until set, such a request closes its connection). */
  serveOtherRequests(handler: OtherRequests): void { this.otherRequests = handler; }

  async start(inbox: TransportInbox): Promise<void> {
    this.inbox = inbox;
    const tlsServer = this.opts.tls?.server;
    const server = tlsServer === undefined ? createServer((socket) => this.accept(socket)) : createTlsServer(tlsServer, (socket) => this.accept(socket));
    server.on('tlsClientError', (err: Error, socket: Socket) => {
      this.opts.onProtocolError?.(`TLS handshake with ${socket.remoteAddress}:${socket.remotePort}: ${err.message}`);
      socket.destroy();
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port, this.opts.host, () => { server.off('error', reject); resolve(); });
    });
    const address = server.address();
    this.boundPort = typeof address === 'object' && address !== null ? address.port : this.opts.port;
    // One sweep for request timeouts instead of a timer per request.
    const every = Math.max(5, Math.floor(this.opts.requestTimeoutMs / 4));
    this.sweepTimer = setInterval(() => this.expire(), every);
    this.sweepTimer.unref();
  }

  send(env: Envelope): void {
    if (this.closed) return;
    if (env.message.type.endsWith('Request')) this.sendRequest(env);
    else this.sendResponse(env);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.sweepTimer !== undefined) clearInterval(this.sweepTimer);
    for (const p of this.peers.values()) { p.socket?.destroy(); p.pending.clear(); }
    for (const c of this.inbound) c.socket.destroy();
    const server = this.server;
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  // ---- Outgoing requests -----------------------------------------------------------------------

  private sendRequest(env: Envelope): void {
    const peer = this.peers.get(env.to);
    const request = env.message as RaftRequest;
    if (peer === undefined || peer.pending.size >= socketTransportLimits.outboundPendingPerPeerMax) {
      return this.failLater(env.correlationId);
    }
    const apiKey = apiKeyOf(request.type);
    const version = apiVersion[apiKey]!;
    const chunks = encodeRequestFrame(apiKey, version, env.correlationId, `raft-${this.opts.nodeId}`, encodeRequest(request, {
      clusterId: this.opts.clusterId, to: env.to, host: this.opts.host, port: this.boundPort,
    }));
    const socket = peer.socket ?? this.connectPeer(peer);
    peer.pending.set(env.correlationId, { request, apiKey, sentMs: Date.now() });
    if (peer.queued !== null) peer.queued.push(chunks);
    else writeChunks(socket, chunks);
  }

  private connectPeer(peer: Peer): Socket {
    const { host, port } = peer.address;
    const tls = this.opts.tls?.client;
    // Requests written before the TLS handshake ends wait in the TLS socket.
    const socket: Socket = tls === undefined ? connect({ host, port }) : connectTls({ ...tls, host, port, ...(isIP(host) === 0 ? { servername: host } : {}) });
    socket.setNoDelay(true);
    peer.socket = socket;
    const splitter = new FrameSplitter(socketTransportLimits.frameBytesMax);
    const connectTimer = setTimeout(() => socket.destroy(), this.opts.connectTimeoutMs ?? this.opts.requestTimeoutMs);
    socket.once(tls === undefined ? 'connect' : 'secureConnect', () => clearTimeout(connectTimer));
    const login = this.startLogin(peer, socket);
    socket.on('data', (chunk) => {
      let frames: Buffer[];
      try {
        frames = splitter.push(chunk);
        for (const frame of frames) {
          if (peer.queued !== null && login !== null) login(frame);
          else this.onResponseFrame(peer, frame);
        }
      } catch (err) {
        this.opts.onProtocolError?.(`response from node ${peer.address.nodeId}: ${(err as Error).message}`);
        socket.destroy();
      }
    });
    socket.on('error', () => { /* 'close' follows and does the work */ });
    socket.on('close', () => {
      clearTimeout(connectTimer);
      if (peer.socket === socket) {
        peer.socket = undefined;
        peer.queued = null;
        for (const id of peer.pending.keys()) this.failLater(id);
        peer.pending.clear();
      }
    });
    return socket;
  }

  /**
   * Writes the login's first request and returns what handles its responses (they come before any
   * Raft response: Raft requests wait in `peer.queued` until the login is done), or null.
   */
  private startLogin(peer: Peer, socket: Socket): ((frame: Buffer) => void) | null {
    if (this.opts.login === undefined) return null;
    const login = this.opts.login();
    peer.queued = [];
    // Correlation ids below zero: never the core's.
    let correlationId = -1;
    let sent = login.start();
    writeChunks(socket, encodeRequestFrame(sent.apiKey, sent.version, correlationId, `raft-${this.opts.nodeId}`, sent.body));
    return (frame) => {
      if (peekCorrelationId(frame) !== correlationId) throw new Error('unexpected response during login');
      const step = login.next(decodeWireResponse(sent.apiKey, sent.version, frame).body);
      if ('done' in step) {
        const queued = peer.queued ?? [];
        peer.queued = null;
        for (const chunks of queued) writeChunks(socket, chunks);
        return;
      }
      sent = step;
      writeChunks(socket, encodeRequestFrame(sent.apiKey, sent.version, --correlationId, `raft-${this.opts.nodeId}`, sent.body));
    };
  }

  private onResponseFrame(peer: Peer, frame: Buffer): void {
    const correlationId = peekCorrelationId(frame);
    const p = peer.pending.get(correlationId);
    // Answers to requests we already gave up on are dropped.
    if (p === undefined) return;
    peer.pending.delete(correlationId);
    const { body } = decodeWireResponse(p.apiKey, apiVersion[p.apiKey]!, frame);
    const message = decodeResponse(p.request, body, socketTransportLimits.fetchEntriesMax);
    this.inbox!.deliver({ from: peer.address.nodeId, to: this.opts.nodeId, correlationId, message });
  }

  private expire(): void {
    const now = Date.now();
    for (const peer of this.peers.values()) {
      for (const [id, p] of peer.pending) {
        if (now - p.sentMs >= this.opts.requestTimeoutMs) {
          peer.pending.delete(id);
          this.inbox!.requestFailed(id);
        }
      }
    }
  }

  /** Failures are reported on the next turn: the driver may be in the middle of sending a Ready. */
  private failLater(correlationId: number): void {
    setImmediate(() => { if (!this.closed) this.inbox!.requestFailed(correlationId); });
  }

  // ---- Incoming requests -----------------------------------------------------------------------

  private accept(socket: Socket): void {
    if (this.closed) { socket.destroy(); return; }
    socket.setNoDelay(true);
    const gate = this.opts.gate?.(socket);
    if (gate !== undefined && 'refused' in gate) {
      this.opts.onProtocolError?.(`connection from ${socket.remoteAddress}:${socket.remotePort} refused: ${gate.refused}`);
      socket.destroy();
      return;
    }
    const conn: InboundConnection = { socket, pending: new Map(), answersInTurn: [], gate };
    this.inbound.add(conn);
    const splitter = new FrameSplitter(socketTransportLimits.frameBytesMax);
    socket.on('data', (chunk) => {
      try {
        for (const frame of splitter.push(chunk)) this.onRequestFrame(conn, frame);
      } catch (err) {
        this.opts.onProtocolError?.(`request from ${socket.remoteAddress}:${socket.remotePort}: ${(err as Error).message}`);
        socket.destroy();
      }
    });
    socket.on('error', () => { /* 'close' follows */ });
    socket.on('close', () => {
      this.inbound.delete(conn);
      for (const [key, c] of this.inboundByKey) if (c === conn) this.inboundByKey.delete(key);
    });
  }

  private onRequestFrame(conn: InboundConnection, frame: Buffer): void {
    const peeked = decodeRequestHeader(frame);
    if (conn.gate !== undefined) {
      const admitted = conn.gate.admit(peeked.header, frame, peeked.bodyOffset);
      if (admitted.kind === 'close') throw new Error(admitted.reason);
      if (admitted.kind === 'answer') {
        this.inTurn(conn)(admitted.chunks);
        if (admitted.thenClose) conn.socket.end();
        return;
      }
    }
    if (!isQuorumApi(peeked.header.requestApiKey) && this.otherRequests !== undefined) return this.onOtherRequest(conn, peeked.header, frame, peeked.bodyOffset);
    const { header, api, body } = decodeWireRequest(frame);
    const apiKey = header.requestApiKey;
    if (apiKey === ApiKey.DescribeQuorum) {
      // In turn: a broker forwards DescribeQuorum on the connection its heartbeats and AlterPartitions
      // wait on, and one answered ahead of them broke that connection (out of order).
      const { description, errorCode } = this.inbox!.describeQuorum();
      this.inTurn(conn)(encodeResponseFrame(apiKey, header.requestApiVersion, header.correlationId, encodeDescribeQuorum(description, errorCode)));
      return;
    }
    if (apiKey === ApiKey.AddRaftVoter || apiKey === ApiKey.RemoveRaftVoter) return this.onVoterChange(conn, apiKey, header, body);
    if (apiVersion[apiKey] === undefined) throw new Error(`${api.name} is not served on the controller listener`);
    if (conn.pending.size >= socketTransportLimits.inboundPendingPerConnectionMax) throw new Error('too many requests pending on one connection');
    const decoded = decodeRequest(apiKey, body);
    // A request for another cluster is dropped with its connection (Kafka answers INCONSISTENT_CLUSTER_ID).
    if (decoded.clusterId !== null && decoded.clusterId !== this.opts.clusterId) throw new Error(`cluster id ${decoded.clusterId} is not ours`);
    conn.pending.set(header.correlationId, { apiKey, version: header.requestApiVersion });
    this.inboundByKey.set(`${decoded.from}:${header.correlationId}`, conn);
    this.inbox!.deliver({ from: decoded.from, to: this.opts.nodeId, correlationId: header.correlationId, message: decoded.message });
  }

  /** A controller API: answered by `otherRequests`; answers leave in the order the requests came. */
  private onOtherRequest(conn: InboundConnection, header: RequestHeader, frame: Buffer, bodyOffset: number): void {
    if (conn.pending.size >= socketTransportLimits.inboundPendingPerConnectionMax) throw new Error('too many requests pending on one connection');
    conn.pending.set(header.correlationId, { apiKey: header.requestApiKey, version: header.requestApiVersion });
    const answer = this.inTurn(conn);
    const socket = conn.socket;
    const where = `${socket.remoteAddress}:${socket.remotePort}`;
    const fail = (reason: string) => {
      this.opts.onProtocolError?.(`request from ${where}: ${reason}`);
      socket.destroy();
    };
    this.otherRequests!(header, frame, bodyOffset, socket.remoteAddress ?? 'unknown', conn.gate?.principal ?? 'User:ANONYMOUS').then((chunks) => {
      conn.pending.delete(header.correlationId);
      if (chunks === null) return fail(`API ${header.requestApiKey} v${header.requestApiVersion} refused`);
      answer(chunks);
    }, (err: unknown) => fail((err as Error).message));
  }

  /**
   * A place in the connection's answer order for the request just read: the answer given to the
   * returned function leaves once every answer before it has. Every API but the Raft RPCs (matched
   * by correlation id by our own transport, which parks Fetches) is answered through one.
   */
  private inTurn(conn: InboundConnection): (chunks: Buffer[]) => void {
    // Answers held behind a slow one count against the same cap as requests pending.
    if (conn.answersInTurn.length >= socketTransportLimits.inboundPendingPerConnectionMax) throw new Error('too many requests pending on one connection');
    const slot: { chunks: Buffer[] | null } = { chunks: null };
    conn.answersInTurn.push(slot);
    return (chunks) => {
      slot.chunks = chunks;
      while (conn.answersInTurn.length > 0 && conn.answersInTurn[0]!.chunks !== null) writeChunks(conn.socket, conn.answersInTurn.shift()!.chunks!);
    };
  }

  /** KIP-853 AddRaftVoter / RemoveRaftVoter, answered by the driver once the change commits. */
  private onVoterChange(conn: InboundConnection, apiKey: number, header: { requestApiVersion: number; correlationId: number }, body: Record<string, unknown>): void {
    const b = body as unknown as AddRaftVoterRequest & RemoveRaftVoterRequest;
    if (b.clusterId !== null && b.clusterId !== this.opts.clusterId) throw new Error(`cluster id ${b.clusterId} is not ours`);
    if (conn.pending.size >= socketTransportLimits.inboundPendingPerConnectionMax) throw new Error('too many requests pending on one connection');
    const answer = this.inTurn(conn);
    const respond = (errorCode: number, errorMessage: string | null): void => {
      conn.pending.delete(header.correlationId);
      answer(encodeResponseFrame(apiKey, header.requestApiVersion, header.correlationId, { throttleTimeMs: 0, errorCode, errorMessage }));
    };
    conn.pending.set(header.correlationId, { apiKey, version: header.requestApiVersion });
    const inbox = this.inbox!;
    if (inbox.changeVoters === undefined) return respond(35, 'voter changes are not supported here');
    let change: VoterChange;
    // RemoveRaftVoter has no TimeoutMs; AddRaftVoter's bounds the wait (0 or less: the driver's default).
    const timeoutMs = apiKey === ApiKey.AddRaftVoter && b.timeoutMs > 0 ? b.timeoutMs : undefined;
    if (apiKey === ApiKey.AddRaftVoter) {
      const listener = b.listeners.find((l) => l.name === 'CONTROLLER') ?? b.listeners[0];
      change = { kind: 'add', voterId: b.voterId, host: listener?.host, port: listener?.port, timeoutMs };
    } else {
      change = { kind: 'remove', voterId: b.voterId };
    }
    inbox.changeVoters(change).then(
      (r) => respond(r.errorCode, r.errorMessage),
      (err: unknown) => respond(-1, String(err)),
    );
  }

  /** Where the voters listen now; a voter whose address changed is reconnected. */
  setVoters(voters: readonly VoterAddress[]): void {
    for (const v of voters) {
      if (v.nodeId === this.opts.nodeId) continue;
      const peer = this.peers.get(v.nodeId);
      if (peer !== undefined && peer.address.host === v.host && peer.address.port === v.port) continue;
      peer?.socket?.destroy();
      this.peers.set(v.nodeId, new Peer(v));
    }
  }

  private sendResponse(env: Envelope): void {
    const key = `${env.to}:${env.correlationId}`;
    const conn = this.inboundByKey.get(key);
    // The requester's connection is gone: it will resend on a new one.
    if (conn === undefined) return;
    this.inboundByKey.delete(key);
    const p = conn.pending.get(env.correlationId);
    if (p === undefined) return;
    conn.pending.delete(env.correlationId);
    writeChunks(conn.socket, encodeResponseFrame(p.apiKey, p.version, env.correlationId, encodeResponse(env.message, this.encodedRanges)));
  }
}

/** One writev per frame; a peer that stops reading is cut off rather than buffered without bound. */
function writeChunks(socket: Socket, chunks: readonly Buffer[]): void {
  if (socket.destroyed) return;
  if (socket.writableLength > socketTransportLimits.socketWriteBufferBytesMax) {
    socket.destroy();
    return;
  }
  socket.cork();
  for (const c of chunks) socket.write(c);
  socket.uncork();
}

/** The quorum's own APIs (Raft RPCs, DescribeQuorum, KIP-853 voter changes), which this transport answers itself. */
export function isQuorumApi(apiKey: number): boolean {
  return apiVersion[apiKey] !== undefined || apiKey === ApiKey.DescribeQuorum || apiKey === ApiKey.AddRaftVoter || apiKey === ApiKey.RemoveRaftVoter;
}

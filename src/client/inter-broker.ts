// Connections from this broker to other brokers' inter-broker listeners, one per remote broker,
// for one kind of traffic (transaction markers, transaction verification). Each kind gets its own
// pool because a connection answers in order: a WriteTxnMarkers waiting for acks=all must not hold
// back a verification a producer is waiting on. A connection that failed, or whose broker moved
// to another address, is replaced on the next request.
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { BrokerConnection } from './connection.js';
import type { ClientSasl } from './sasl-login.js';

export interface InterBrokerEndpoint { host: string; port: number }

export interface InterBrokerOptions {
  /** Shows in the remote broker's request log. */
  clientId: string;
  requestTimeoutMs: number;
  /** Where `nodeId` listens for inter-broker traffic now; undefined while it is not registered. */
  endpoint(nodeId: number): InterBrokerEndpoint | undefined;
  /** TLS options when the inter-broker listener is SSL (the broker's own keystore and truststore). */
  tls?: TlsConnectionOptions | undefined;
  /** SASL towards a SASL_PLAINTEXT / SASL_SSL inter-broker listener. */
  sasl?: ClientSasl | undefined;
}

interface Entry { host: string; port: number; conn: Promise<BrokerConnection> }

export class InterBrokerConnections {
  private readonly open = new Map<number, Entry>();
  private closed = false;

  constructor(private readonly o: InterBrokerOptions) {}

  /** A negotiated connection to `nodeId`; rejects when it has no endpoint or cannot be reached. */
  connection(nodeId: number): Promise<BrokerConnection> {
    if (this.closed) return Promise.reject(new Error('inter-broker connections are closed'));
    const e = this.o.endpoint(nodeId);
    if (e === undefined || e.port <= 0) return Promise.reject(new Error(`broker ${nodeId} has no inter-broker endpoint`));
    const current = this.open.get(nodeId);
    if (current && current.host === e.host && current.port === e.port) {
      return current.conn.then((c) => (c.closed ? this.reopen(nodeId, e) : c));
    }
    return this.reopen(nodeId, e);
  }

  private reopen(nodeId: number, e: InterBrokerEndpoint): Promise<BrokerConnection> {
    this.drop(nodeId);
    const conn = (async () => {
      const c = await BrokerConnection.open({ host: e.host, port: e.port, clientId: this.o.clientId, requestTimeoutMs: this.o.requestTimeoutMs, connectTimeoutMs: 5000, ...(this.o.tls ? { tls: this.o.tls } : {}), ...(this.o.sasl ? { sasl: this.o.sasl } : {}) });
      try {
        await c.negotiate();
      } catch (err) {
        c.close();
        throw err;
      }
      return c;
    })();
    const entry = { host: e.host, port: e.port, conn };
    this.open.set(nodeId, entry);
    // A failed connect is forgotten, so the next request tries again.
    conn.catch(() => { if (this.open.get(nodeId) === entry) this.open.delete(nodeId); });
    return conn;
  }

  /** Closes the connection to `nodeId` (its request failed): the next request opens a new one. */
  drop(nodeId: number): void {
    const entry = this.open.get(nodeId);
    if (!entry) return;
    this.open.delete(nodeId);
    entry.conn.then((c) => c.close(), () => {});
  }

  close(): void {
    this.closed = true;
    for (const id of [...this.open.keys()]) this.drop(id);
  }
}

// One connection to a Kafka broker: framing, correlation ids, pipelining, timeouts. Responses are
// matched by correlation id; Kafka answers in order per connection, and we check that it does.
import { connect, isIP, type Socket } from 'node:net';
import { connect as connectTls, type ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import {
  FrameSplitter, ProtocolError, decodeResponse, encodeRequestFrame, peekCorrelationId, apiInfo, inRange,
} from '../protocol/index.js';
import { limits } from '../util/index.js';
import { ClientError } from './errors.js';
import { SaslLogin, type ClientSasl, type SaslLoginStep } from './sasl-login.js';

export { ClientError } from './errors.js';

interface Pending {
  correlationId: number;
  apiKey: number;
  version: number;
  resolve: (body: any) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
  reuseBuffer: boolean;
}

export interface SendOptions {
  /**
   * Read a large response into a buffer this connection reuses instead of a fresh one: its byte
   * fields (record batches) stay valid only until the next request with this option is sent, and
   * only one such request may be in flight. For a consumer that is done with each Fetch response
   * before it sends the next Fetch. A fresh 50 MiB buffer per response cost this client more than
   * reading the bytes: a page fault and a kernel page clear per 4 KiB, and a mark-compact GC per
   * ~64 MiB of new external memory (bench/README.md).
   */
  reuseResponseBuffer?: boolean;
}

/**
 * Responses at least this large are read into the reused buffer. Below it Buffer.allocUnsafe
 * slices Node's shared pool, which is cheap; above it every response is a new backing store that
 * V8 counts as external memory (bench e2e's ~50 KiB Fetch responses, a thousand a second, were
 * most of its consumer's garbage).
 */
const REUSED_RESPONSE_BYTES_MIN = Buffer.poolSize >>> 1;

export interface ConnectionOptions {
  host: string;
  port: number;
  clientId?: string;
  requestTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** Connect with TLS (a listener whose security protocol is SSL): keystore, truststore, versions. */
  tls?: TlsConnectionOptions;
  /** Authenticate with SASL first (a SASL_PLAINTEXT or SASL_SSL listener). */
  sasl?: ClientSasl;
}

export type { ClientSasl } from './sasl-login.js';

export class BrokerConnection {
  private socket: Socket | null = null;
  private readonly pending: Pending[] = [];
  private nextCorrelationId = 1;
  private closedError: Error | null = null;
  /** The buffer responses to `reuseResponseBuffer` requests are read into (see SendOptions). */
  private reusedResponse: Buffer | null = null;
  /** When to log in again (KIP-368: at 85% of the session the broker granted), or null. */
  private reauthAtMs: number | null = null;
  /** A re-authentication in progress: requests wait for it. */
  private reauthenticating: Promise<void> | null = null;
  /** API key → highest version both sides support, once `negotiate()` ran. */
  versions = new Map<number, [number, number]>();

  private constructor(readonly options: ConnectionOptions) {}

  static async open(options: ConnectionOptions): Promise<BrokerConnection> {
    const c = new BrokerConnection(options);
    await c.connectSocket();
    if (options.sasl) {
      try {
        await c.authenticate(options.sasl);
      } catch (e) {
        c.close();
        throw e;
      }
    }
    return c;
  }

  /**
   * SaslHandshake v1 and SaslAuthenticate v1 (both are served before authentication, so no
   * ApiVersions is needed first). Throws ClientError with the broker's message when refused.
   */
  private async authenticate(sasl: ClientSasl): Promise<void> {
    const login = new SaslLogin(sasl);
    let step: SaslLoginStep = login.start();
    while (!('done' in step)) step = login.next(await this.sendNow<Record<string, any>>(step.apiKey, step.version, step.body, {}));
    this.reauthAtMs = step.sessionLifetimeMs > 0n ? Date.now() + Math.floor(Number(step.sessionLifetimeMs) * 0.85) : null;
  }

  private connectSocket(): Promise<void> {
    const { host, port, connectTimeoutMs = 10_000, tls } = this.options;
    return new Promise((resolve, reject) => {
      // Responses are read straight into their own buffers (a large Fetch response is neither
      // copied out of socket chunks nor joined): see FrameSplitter.readBuffer.
      const frameBytesMax = limits.requestBytesMax * 2;
      const splitter = new FrameSplitter(frameBytesMax, frameBytesMax, (bytes) => this.allocResponse(bytes, frameBytesMax));
      const onRead = (n: number): boolean => {
        try {
          for (const frame of splitter.pushRead(n)) this.onFrame(frame);
        } catch (err) {
          this.fail(err instanceof Error ? err : new Error(String(err)));
        }
        return true;
      };
      const onread = { buffer: () => splitter.readBuffer(), callback: onRead };
      // TLS reads decrypted bytes into the same buffers (tls.connect takes onread as net.connect does).
      const socket = tls === undefined ? connect({ host, port, onread })
        : connectTls({ ...tls, host, port, onread, ...(isIP(host) === 0 ? { servername: host } : {}) } as TlsConnectionOptions);
      socket.setNoDelay(true);
      const timer = setTimeout(() => { socket.destroy(); reject(new ClientError(`connect to ${host}:${port} timed out`, 'TIMEOUT')); }, connectTimeoutMs);
      socket.once(tls === undefined ? 'connect' : 'secureConnect', () => { clearTimeout(timer); this.socket = socket; resolve(); });
      socket.once('error', (err) => { clearTimeout(timer); reject(new ClientError(`connect to ${host}:${port}: ${err.message}`)); });
      socket.on('close', () => this.fail(new ClientError(`connection to ${host}:${port} closed`)));
      socket.on('error', (err) => this.fail(new ClientError(`connection to ${host}:${port}: ${err.message}`)));
    });
  }

  /** Memory for a response frame of `bytes`; frames arrive in request order, so it is the head's. */
  private allocResponse(bytes: number, frameBytesMax: number): Buffer {
    if (!this.pending[0]?.reuseBuffer || bytes < REUSED_RESPONSE_BYTES_MIN) return Buffer.allocUnsafe(bytes);
    if (!this.reusedResponse || this.reusedResponse.length < bytes) {
      // Grow by a quarter at least, so slowly growing responses do not reallocate each time.
      const grown = Math.ceil((this.reusedResponse?.length ?? 0) * 1.25);
      this.reusedResponse = Buffer.allocUnsafeSlow(Math.min(frameBytesMax, Math.max(bytes, grown)));
    }
    return this.reusedResponse.subarray(0, bytes);
  }

  private onFrame(frame: Buffer): void {
    const head = this.pending.shift();
    const correlationId = peekCorrelationId(frame);
    if (!head) throw new ProtocolError(`unexpected response with correlation id ${correlationId}`);
    clearTimeout(head.timer);
    if (head.correlationId !== correlationId) {
      // The head is off the queue already: rejected here, or its caller would wait for ever (fail()
      // rejects only the requests still queued).
      const err = new ProtocolError(`response out of order: expected ${head.correlationId}, got ${correlationId}`);
      head.reject(err);
      throw err;
    }
    try {
      head.resolve(decodeResponse(head.apiKey, head.version, frame).body);
    } catch (err) {
      head.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private fail(err: Error): void {
    if (!this.closedError) this.closedError = err;
    this.socket?.destroy();
    for (const p of this.pending.splice(0)) { clearTimeout(p.timer); p.reject(err); }
  }

  get closed(): boolean { return this.closedError !== null; }

  /**
   * Sends a request and resolves with the decoded response body. When the SASL session is near its
   * end (KIP-368) the connection logs in again first and the request follows.
   */
  send<T = any>(apiKey: number, version: number, body: object, opts: SendOptions = {}): Promise<T> {
    const sasl = this.options.sasl;
    if (sasl !== undefined && this.reauthAtMs !== null && this.reauthenticating === null && Date.now() >= this.reauthAtMs) {
      this.reauthenticating = this.authenticate(sasl).finally(() => { this.reauthenticating = null; });
      this.reauthenticating.catch((e: Error) => this.fail(e));
    }
    if (this.reauthenticating !== null) return this.reauthenticating.then(() => this.sendNow<T>(apiKey, version, body, opts));
    return this.sendNow<T>(apiKey, version, body, opts);
  }

  private sendNow<T>(apiKey: number, version: number, body: object, opts: SendOptions): Promise<T> {
    if (this.closedError) return Promise.reject(this.closedError);
    const reuseBuffer = opts.reuseResponseBuffer === true;
    if (reuseBuffer && this.pending.some((p) => p.reuseBuffer)) {
      return Promise.reject(new ClientError('one request with reuseResponseBuffer is already in flight', 'PROTOCOL'));
    }
    const correlationId = this.nextCorrelationId++ & 0x7fffffff;
    const frame = encodeRequestFrame(apiKey, version, correlationId, this.options.clientId ?? 'logline', body);
    return new Promise<T>((resolve, reject) => {
      const timeoutMs = this.options.requestTimeoutMs ?? 30_000;
      const timer = setTimeout(() => this.fail(new ClientError(`request ${apiKey} v${version} timed out after ${timeoutMs} ms`, 'TIMEOUT')), timeoutMs);
      this.pending.push({ correlationId, apiKey, version, resolve, reject, timer, reuseBuffer });
      this.writeFrame(frame);
    });
  }

  /** Sends a request that gets no response (Produce with acks=0). */
  sendNoResponse(apiKey: number, version: number, body: object): void {
    if (this.closedError) throw this.closedError;
    const correlationId = this.nextCorrelationId++ & 0x7fffffff;
    this.writeFrame(encodeRequestFrame(apiKey, version, correlationId, this.options.clientId ?? 'logline', body));
  }

  /** A request's chunks (header, then record bytes as they are) in one write to the kernel. */
  private writeFrame(frame: Buffer[]): void {
    const socket = this.socket!;
    socket.cork();
    for (const chunk of frame) socket.write(chunk);
    socket.uncork();
  }

  /** Asks the broker for its API versions and remembers the usable range of each. */
  async negotiate(): Promise<void> {
    const response = await this.send(18, 3, { clientSoftwareName: 'logline', clientSoftwareVersion: '0.1.0' });
    if (response.errorCode !== 0) throw new ClientError(`ApiVersions failed with error ${response.errorCode}`, 'PROTOCOL');
    for (const k of response.apiKeys as { apiKey: number; minVersion: number; maxVersion: number }[]) {
      const ours = apiInfo(k.apiKey);
      if (!ours) continue;
      const min = Math.max(k.minVersion, ours.validVersions[0]);
      const max = Math.min(k.maxVersion, ours.validVersions[1]);
      if (min <= max) this.versions.set(k.apiKey, [min, max]);
    }
  }

  /** The highest version of an API both sides speak, optionally capped. */
  version(apiKey: number, capMax = 0x7fff): number {
    const range = this.versions.get(apiKey);
    if (!range || !inRange(range, Math.min(range[1], capMax))) {
      throw new ClientError(`broker does not support API ${apiKey}${capMax < 0x7fff ? ` at v${capMax} or below` : ''}`, 'UNSUPPORTED_VERSION');
    }
    return Math.min(range[1], capMax);
  }

  close(): void {
    this.fail(new ClientError('connection closed by client'));
  }
}

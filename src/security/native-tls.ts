// TLS listeners' server sessions in our addon (src/security/native/tls-session.c: OpenSSL inside
// Node, over memory BIOs) instead of node:tls, whose socket hands JavaScript one event per TLS
// record. The network layer reads ciphertext into a buffer of its own, feeds it here, and decrypts
// everything it brought into its request buffers with one call; responses are encrypted with one
// call per response. Settings are a listener's node:tls options (ListenerTls.server), so both
// paths take the same keys. Without the addon (no compiler at install) listeners use node:tls;
// LOGLINE_TLS_ENGINE=node asks for node:tls regardless.
import { createRequire } from 'node:module';
import { X509Certificate } from 'node:crypto';
import { DEFAULT_CIPHERS } from 'node:tls';
import type { ListenerTls } from './ssl.js';

interface Addon {
  contextNew(cert: Buffer | null, key: Buffer | null, pfx: Buffer | null, passphrase: Buffer | null, ca: Buffer | null, clientAuth: number,
    minVersion: Buffer | null, maxVersion: Buffer | null, cipherList: Buffer | null, cipherSuites: Buffer | null): object;
  sessionNew(context: object): object;
  sessionFeed(session: object, buffer: Buffer, offset: number, length: number): void;
  sessionHandshake(session: object): number;
  sessionRead(session: object, buffer: Buffer, offset: number, length: number): number;
  sessionWrite(session: object, source: Buffer, dest: Buffer, destOffset: number): number;
  sessionOutput(session: object): Buffer | null;
  sessionPeer(session: object): { certificate: Buffer | null; verifyError: string | null; protocol: string; maxFragment: number };
  sessionShutdown(session: object): void;
  sessionFree(session: object): void;
}

let addon: Addon | null | undefined;

/** A TLS record's plaintext at most, and what encryption adds to it at most (OpenSSL's SSL3_RT_MAX_ENCRYPTED_OVERHEAD, with the header). */
const TLS_RECORD_PLAINTEXT_MAX = 16384;
const TLS_RECORD_OVERHEAD_MAX = 256 + 64 + 5;

function load(): Addon | null {
  if (addon !== undefined) return addon;
  const require = createRequire(import.meta.url);
  addon = null;
  // From dist/src/security/ (and src/security/) up to the package root's build/.
  for (const path of ['../../../build/tls-session.node', '../../build/tls-session.node']) {
    try {
      addon = require(new URL(path, import.meta.url).pathname) as Addon;
      break;
    } catch {
      // not built, or not here
    }
  }
  return addon;
}

/** Whether TLS listeners use the addon (built, and not turned off with LOGLINE_TLS_ENGINE=node). */
export function nativeTlsAvailable(): boolean {
  return process.env.LOGLINE_TLS_ENGINE !== 'node' && load() !== null;
}

const bytes = (v: unknown): Buffer | null => {
  if (v === undefined || v === null) return null;
  if (Buffer.isBuffer(v)) return v;
  if (typeof v === 'string') return Buffer.from(v, 'latin1');
  if (Array.isArray(v)) return Buffer.concat(v.map((x) => bytes(x) ?? Buffer.alloc(0)));
  throw new TypeError(`unsupported TLS option value: ${typeof v}`);
};

/** A listener's server context: its certificate, trust, client authentication, versions and ciphers. */
export class NativeTlsContext {
  readonly handle: object;

  constructor(settings: ListenerTls) {
    const a = load();
    if (a === null) throw new Error('the TLS addon (build/tls-session.node) is not built');
    const o = settings.server;
    // As node:tls reads `ciphers`: TLS_* names are TLSv1.3 suites, the rest OpenSSL's TLSv1.2 list;
    // a version left without a cipher is turned off.
    const names = String(o.ciphers ?? DEFAULT_CIPHERS).split(':').filter((c) => c !== '');
    const suites = names.filter((c) => c.startsWith('TLS_')).join(':');
    const list = names.filter((c) => !c.startsWith('TLS_')).join(':');
    if (suites === '' && list === '') throw new Error('ssl.cipher.suites names no cipher suite');
    const minVersion = list === '' ? 'TLSv1.3' : o.minVersion;
    const maxVersion = suites === '' ? 'TLSv1.2' : o.maxVersion;
    // Passphrases are UTF-8, as node:tls passes them; PEM text is ASCII.
    const passphrase = typeof o.passphrase === 'string' ? Buffer.from(o.passphrase, 'utf8') : null;
    this.handle = a.contextNew(bytes(o.cert), bytes(o.key), bytes(o.pfx), passphrase, bytes(o.ca),
      settings.clientAuth === 'required' ? 2 : settings.clientAuth === 'requested' ? 1 : 0,
      bytes(minVersion), bytes(maxVersion), bytes(list), suites === '' ? null : bytes(suites));
  }
}

/** Chunks shorter than this are joined with their neighbours: a record each would cost both sides. */
const SMALL_CHUNK_BYTES = 4096;

/** `chunks` with each run of small ones joined into one (a response's size prefix and headers). */
function coalesceSmall(chunks: readonly Buffer[]): readonly Buffer[] {
  if (chunks.length < 2) return chunks;
  const out: Buffer[] = [];
  let run: Buffer[] = [];
  const flushRun = () => {
    if (run.length > 0) out.push(run.length === 1 ? run[0]! : Buffer.concat(run));
    run = [];
  };
  for (const c of chunks) {
    if (c.length < SMALL_CHUNK_BYTES) run.push(c);
    else { flushRun(); out.push(c); }
  }
  flushRun();
  return out;
}

/** The peer as tlsPeerPrincipal reads it (the shape of a TLSSocket's). */
export interface NativeTlsPeer {
  getPeerX509Certificate(): X509Certificate | undefined;
  readonly authorized: boolean;
  readonly authorizationError: string | null;
  readonly protocol: string;
}

/** One connection's TLS session, server side. Every method is synchronous; errors throw. */
export class NativeTlsSession {
  private readonly a: Addon;
  private handle: object | null;
  /** The largest record plaintext the client agreed to (known once the handshake is done). */
  private maxFragment = TLS_RECORD_PLAINTEXT_MAX;

  constructor(context: NativeTlsContext) {
    this.a = load()!;
    this.handle = this.a.sessionNew(context.handle);
  }

  private get h(): object {
    if (this.handle === null) throw new Error('TLS session is closed');
    return this.handle;
  }

  /** Ciphertext read from the client. */
  feed(buffer: Buffer, offset: number, length: number): void { this.a.sessionFeed(this.h, buffer, offset, length); }

  /** Advances the handshake with what was fed: true once it is done. */
  handshake(): boolean {
    if (this.a.sessionHandshake(this.h) !== 1) return false;
    this.maxFragment = this.a.sessionPeer(this.h).maxFragment;
    return true;
  }

  /** Decrypts what was fed into `buffer`; the bytes written, or -1 once the client closed the session. */
  read(buffer: Buffer): number { return this.a.sessionRead(this.h, buffer, 0, buffer.length); }

  /**
   * Encrypts `chunks` into one buffer of records (what output() held first leads it): a record per
   * 16 KiB of each chunk, or per the smaller fragment the client asked for. `alloc` gives the
   * memory (the network layer's response slabs).
   */
  encrypt(chunks: readonly Buffer[], alloc: (bytes: number) => Buffer = Buffer.allocUnsafe): Buffer {
    const pending = this.output();
    const pieces = coalesceSmall(chunks);
    let bytes = pending?.length ?? 0;
    let records = 0;
    for (const c of pieces) {
      bytes += c.length;
      records += Math.ceil(c.length / this.maxFragment);
    }
    const out = alloc(bytes + records * TLS_RECORD_OVERHEAD_MAX);
    let at = pending === null ? 0 : pending.copy(out);
    for (const c of pieces) if (c.length > 0) at = this.a.sessionWrite(this.h, c, out, at);
    return out.subarray(0, at);
  }

  /** Ciphertext to send to the client, if any. */
  output(): Buffer | null { return this.a.sessionOutput(this.h); }

  peer(): NativeTlsPeer {
    const p = this.a.sessionPeer(this.h);
    const cert = p.certificate === null ? undefined : new X509Certificate(p.certificate);
    return { getPeerX509Certificate: () => cert, authorized: cert !== undefined && p.verifyError === null, authorizationError: p.verifyError, protocol: p.protocol };
  }

  /** Queues close_notify in output(). */
  shutdown(): void { if (this.handle !== null) this.a.sessionShutdown(this.handle); }

  /** Releases OpenSSL's state (also done at garbage collection). */
  close(): void {
    if (this.handle === null) return;
    this.a.sessionFree(this.handle);
    this.handle = null;
  }
}

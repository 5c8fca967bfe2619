// The registry's HTTP listener (schema.registry.listener): node:http, or node:https when the
// listener is an SSL one, a body read up to limits.registryRequestBytesMax (a larger one is
// answered 413 without being buffered), and every answer in Confluent's content type. With HTTP
// Basic on, a request without valid credentials is answered 401 before its body is read; the
// caller's principal (the Basic user, else the TLS client certificate's, else ANONYMOUS) goes to
// the REST door, which authorizes it. Anything the REST door throws that is not a RegistryError
// is a bug: it is logged and answered 50001 rather than taking the process down.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket, TlsOptions } from 'node:tls';
import { limits, type Logger } from '../util/index.js';
import { RegistryCaller, type AclDecision } from './access.js';
import { registryErrors as E } from './errors.js';
import { REGISTRY_CONTENT_TYPE, type RegistryRest } from './rest.js';

/** How the listener secures itself (the node builds it from the broker's settings). */
export interface RegistryListenerSecurity {
  /** TLS server options, and the principal of a TLS peer (null: refused, e.g. an untrusted certificate). */
  tls: { options: TlsOptions; principalOf(socket: TLSSocket): string | null } | null;
  /** HTTP Basic: the principal of a user and password, or null; absent: no authentication asked. */
  basic: ((user: string, password: string) => string | null) | null;
  /** The authorizer's decision; null: everyone may do everything. */
  authorize: AclDecision | null;
}
const OPEN: RegistryListenerSecurity = { tls: null, basic: null, authorize: null };

/** The caller's principal, or null when it must be refused (401). */
function principalOf(req: IncomingMessage, security: RegistryListenerSecurity): string | null {
  if (security.basic !== null) {
    const m = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(req.headers.authorization ?? '');
    if (!m) return null;
    const text = Buffer.from(m[1]!, 'base64').toString('utf8');
    const colon = text.indexOf(':');
    return colon < 0 ? null : security.basic(text.slice(0, colon), text.slice(colon + 1));
  }
  if (security.tls !== null) return security.tls.principalOf(req.socket as TLSSocket);
  return 'User:ANONYMOUS';
}

export interface RegistryListener { host: string; port: number; url: string; tls: boolean; close(): Promise<void> }

function readBody(req: IncomingMessage, max: number): Promise<Buffer | 'too large'> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > max) { resolve('too large'); return; }
    const chunks: Buffer[] = [];
    let bytes = 0;
    req.on('data', (c: Buffer) => {
      bytes += c.length;
      if (bytes > max) { req.removeAllListeners('data'); resolve('too large'); return; }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>, close = false, raw = false): void {
  const text = raw ? String(body) : JSON.stringify(body);
  const length = Buffer.byteLength(text);
  if (headers === undefined && !close) res.writeHead(status, { 'content-type': REGISTRY_CONTENT_TYPE, 'content-length': length });
  else res.writeHead(status, { 'content-type': REGISTRY_CONTENT_TYPE, 'content-length': length, ...headers, ...(close ? { connection: 'close' } : {}) });
  res.end(text);
}

/** The caller of a listener without authentication or authorizer: one object for every request. */
const ANONYMOUS = 'User:ANONYMOUS';

/** A request's path (still percent-encoded) and query; origin-form targets are split without a URL object. */
function target(raw: string): { path: string; query: URLSearchParams } {
  if (!raw.startsWith('/')) { const url = new URL(raw, 'http://registry'); return { path: url.pathname, query: url.searchParams }; }
  const q = raw.indexOf('?');
  return q < 0 ? { path: raw, query: new URLSearchParams() } : { path: raw.slice(0, q), query: new URLSearchParams(raw.slice(q + 1)) };
}

/** Whether the request carries a body to read (a GET, as lookups are, has none). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return length !== undefined ? length !== '0' : req.headers['transfer-encoding'] !== undefined;
}

export async function startRegistryListener(rest: RegistryRest, address: { host: string; port: number }, logger: Logger, security: RegistryListenerSecurity = OPEN): Promise<RegistryListener> {
  const sockets = new Set<Socket>();
  const anonymous = new RegistryCaller(ANONYMOUS, '', security.authorize);
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const principal = principalOf(req, security);
    if (principal === null) {
      send(res, 401, E.unauthorized().body(), { 'www-authenticate': 'Basic realm="schema-registry"' }, true);
      req.resume();
      return;
    }
    // Without an authorizer the caller's address decides nothing: no per-request caller then.
    const caller = security.authorize === null && principal === ANONYMOUS ? anonymous : new RegistryCaller(principal, req.socket.remoteAddress ?? '', security.authorize);
    let body: Buffer | null = null;
    if (hasBody(req)) {
      const read = await readBody(req, limits.registryRequestBytesMax);
      if (read === 'too large') { send(res, 413, E.tooLarge(limits.registryRequestBytesMax).body(), {}, true); req.destroy(); return; }
      if (read.length > 0) body = read;
    }
    const { path, query } = target(req.url ?? '/');
    const answer = await rest.handle({ method: req.method ?? 'GET', path, query, body, headers: req.headers, caller });
    send(res, answer.status, answer.body, answer.headers, false, answer.raw === true);
  };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    serve(req, res).catch((e: unknown) => {
      logger.error(`schema registry ${req.method} ${req.url}: ${e instanceof Error ? e.stack : String(e)}`);
      if (!res.headersSent) send(res, 500, { error_code: 50001, message: 'Error in the backend data store' });
      else res.destroy();
    });
  };
  const server = security.tls !== null ? createHttpsServer(security.tls.options, handler) : createServer(handler);
  server.on('connection', (s: Socket) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => { server.off('error', reject); resolve(); });
  });
  const bound = server.address();
  const port = typeof bound === 'object' && bound ? bound.port : address.port;
  const host = address.host === '0.0.0.0' || address.host === '::' ? '127.0.0.1' : address.host;
  return {
    host, port, tls: security.tls !== null, url: `${security.tls !== null ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

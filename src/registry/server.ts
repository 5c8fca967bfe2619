// The registry's HTTP listener (schema.registry.listener): node:http, a body read up to
// limits.registryRequestBytesMax (a larger one is answered 413 without being buffered), and every
// answer in Confluent's content type. Anything the REST door throws that is not a RegistryError
// is a bug: it is logged and answered 50001 rather than taking the process down.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { limits, type Logger } from '../util/index.js';
import { registryErrors as E } from './errors.js';
import { REGISTRY_CONTENT_TYPE, type RegistryRest } from './rest.js';

export interface RegistryListener { host: string; port: number; url: string; close(): Promise<void> }

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

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}, close = false, raw = false): void {
  const text = raw ? String(body) : JSON.stringify(body);
  res.writeHead(status, { 'content-type': REGISTRY_CONTENT_TYPE, 'content-length': Buffer.byteLength(text), ...headers, ...(close ? { connection: 'close' } : {}) });
  res.end(text);
}

export async function startRegistryListener(rest: RegistryRest, address: { host: string; port: number }, logger: Logger): Promise<RegistryListener> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req, limits.registryRequestBytesMax);
      if (body === 'too large') { send(res, 413, E.tooLarge(limits.registryRequestBytesMax).body(), {}, true); req.destroy(); return; }
      const url = new URL(req.url ?? '/', 'http://registry');
      const answer = await rest.handle({ method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, body: body.length > 0 ? body : null, headers: req.headers });
      send(res, answer.status, answer.body, answer.headers, false, answer.raw === true);
    })().catch((e: unknown) => {
      logger.error(`schema registry ${req.method} ${req.url}: ${e instanceof Error ? e.stack : String(e)}`);
      if (!res.headersSent) send(res, 500, { error_code: 50001, message: 'Error in the backend data store' });
      else res.destroy();
    });
  });
  server.on('connection', (s: Socket) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => { server.off('error', reject); resolve(); });
  });
  const bound = server.address();
  const port = typeof bound === 'object' && bound ? bound.port : address.port;
  const host = address.host === '0.0.0.0' || address.host === '::' ? '127.0.0.1' : address.host;
  return {
    host, port, url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

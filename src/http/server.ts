// One HTTP listener per node (http.listener): health, the read-only admin API and /metrics.
//
// node:http with a route table rather than a framework: every route is a read-only GET answered
// from memory with JSON or Prometheus text, so there is no body parsing, content negotiation,
// validation or plugin life cycle to need one, and the process keeps one fewer dependency tree on
// its network edge. Prometheus rendering and Node's runtime metrics come from prom-client.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { HttpListener, ServerHandle } from '../broker/index.js';
import { limits } from '../util/index.js';
import { brokers, health, nodeView, quorum, readiness, topic, topics } from './admin.js';
import { OPENMETRICS_CONTENT_TYPE, nodeMetrics, toOpenMetrics, wantsOpenMetrics } from './metrics.js';

type Answer = { status: number; json: unknown } | { status: number; text: string; contentType: string };
type Route = (node: ServerHandle, rest: string, req: IncomingMessage) => Answer | Promise<Answer>;

const ok = (json: unknown): Answer => ({ status: 200, json });
const notFound = (what: string): Answer => ({ status: 404, json: { error: 'not found', detail: what } });

function routesFor(node: ServerHandle): Map<string, Route> {
  const registry = nodeMetrics(node);
  return new Map<string, Route>([
    ['/v1/health', () => ok(health(node))],
    ['/v1/ready', () => {
      const r = readiness(node);
      return { status: r.ready ? 200 : 503, json: r };
    }],
    ['/v1/node', () => ok(nodeView(node))],
    ['/v1/brokers', () => ok(brokers(node))],
    ['/v1/quorum', () => {
      const q = quorum(node, Date.now());
      return q === null ? notFound('this node has no metadata log') : ok(q);
    }],
    ['/v1/topics', () => {
      const t = topics(node);
      return t === null ? notFound('this node has no metadata log') : ok({ topics: t });
    }],
    ['/v1/topics/', (_, name) => {
      const t = topic(node, name);
      return t === null ? notFound(`topic ${name}`) : ok(t);
    }],
    ['/metrics', async (_, __, req) => {
      const text = await registry.metrics();
      return wantsOpenMetrics(req.headers.accept)
        ? { status: 200, text: toOpenMetrics(text), contentType: OPENMETRICS_CONTENT_TYPE }
        : { status: 200, text, contentType: registry.contentType };
    }],
  ]);
}

/** The route for a path: an exact one, or a prefix ending in '/' with the rest (decoded) as its argument. */
function match(routes: Map<string, Route>, path: string): [Route, string] | null {
  const exact = routes.get(path);
  if (exact !== undefined) return [exact, ''];
  const slash = path.lastIndexOf('/');
  const prefix = routes.get(path.slice(0, slash + 1));
  if (prefix === undefined || slash === path.length - 1) return null;
  try {
    return [prefix, decodeURIComponent(path.slice(slash + 1))];
  } catch {
    return null;
  }
}

/** Starts `node`'s HTTP listener on `address` (port 0: a free one); rejects if it cannot bind (EADDRINUSE). */
export async function startHttpListener(node: ServerHandle, address: { host: string; port: number }): Promise<HttpListener> {
  const routes = routesFor(node);
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => { void serve(routes, node, req, res); });
  server.on('connection', (s) => { sockets.add(s); s.once('close', () => sockets.delete(s)); });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: address.host, port: address.port }, () => { server.off('error', reject); resolve(); });
  });
  const bound = server.address();
  const port = typeof bound === 'object' && bound !== null ? bound.port : address.port;
  let closing: Promise<void> | null = null;
  return {
    host: address.host,
    port,
    close: () => closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      // Keep-alive connections (a scraper's) would hold close() open.
      for (const s of sockets) s.destroy();
    }),
  };
}

async function serve(routes: Map<string, Route>, node: ServerHandle, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let answer: Answer;
  try {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const found = match(routes, path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);
    if (found === null) answer = notFound(path);
    else if (req.method !== 'GET' && req.method !== 'HEAD') answer = { status: 405, json: { error: 'method not allowed', detail: 'this API is read-only' } };
    else answer = await found[0](node, found[1], req);
  } catch (e) {
    answer = { status: 500, json: { error: 'internal error', detail: e instanceof Error ? e.message : String(e) } };
  }
  const body = 'json' in answer ? JSON.stringify(answer.json, null, 2) + '\n' : answer.text;
  const bytes = Buffer.from(body.length > limits.httpResponseBytesMax ? JSON.stringify({ error: 'answer too large', bytes: body.length }) : body);
  res.writeHead(answer.status, {
    'content-type': 'json' in answer ? 'application/json; charset=utf-8' : answer.contentType,
    'content-length': bytes.length,
    'cache-control': 'no-store',
    ...(answer.status === 405 ? { allow: 'GET, HEAD' } : {}),
  });
  res.end(req.method === 'HEAD' ? undefined : bytes);
}

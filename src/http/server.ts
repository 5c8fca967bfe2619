// One HTTP listener per node (http.listener): health, the JSON admin API under /v1, /metrics and
// the web console at /.
//
// node:http with a small route table rather than a framework: the reads are answered from memory or
// through the Kafka APIs, the few writes take a small JSON body, and the process keeps one fewer
// dependency tree on its network edge. Prometheus rendering and Node's runtime metrics come from
// prom-client. Writes (create/delete topic, alter configs, produce) are allowed only on a loopback
// listener or with the http.admin.username/password as HTTP Basic credentials, and only as JSON
// (a cross-site form cannot send that content type without a CORS preflight, which is never granted).
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ClientError, ClusterClient, KafkaError, type ClientSasl } from '../client/index.js';
import { clientSaslFor } from '../network/index.js';
import { ErrorCode, isRetriable } from '../protocol/index.js';
import { RegistryError } from '../registry/index.js';
import { limits } from '../util/index.js';
import { brokers, health, linksView, nodeView, quorum, readiness, topic, topics } from './admin.js';
import {
  BadRequest, alterTopicConfigs, createTopic, deleteTopic, fillSizes, listGroups, messagesQuery, produceMessage, readMessages, topicConfigs,
} from './admin-ops.js';
import { consoleAsset } from './console/assets.js';
import { anyGroupLag, localGroupsLag } from './group-lag.js';
import { OPENMETRICS_CONTENT_TYPE, nodeMetrics, toOpenMetrics, wantsOpenMetrics } from './metrics.js';
import type { HttpListener, NodeHandle } from './node-handle.js';
import { NoRegistry, schemaById, schemaSubject, schemaSubjects, withDecoded } from './schemas.js';

type Answer = { status: number; json: unknown } | { status: number; text: string | Buffer; contentType: string; headers?: Record<string, string> };

interface Call {
  node: NodeHandle;
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  /** This node's client of its own Kafka listener (the admin operations' way in). */
  client: () => ClusterClient;
  req: IncomingMessage;
}

interface Route { method: 'GET' | 'POST' | 'PUT' | 'DELETE'; path: string; run: (c: Call) => Answer | Promise<Answer> }

const ok = (json: unknown): Answer => ({ status: 200, json });
const notFound = (what: string): Answer => ({ status: 404, json: { error: 'not found', detail: what } });
const noMetadata = () => notFound('this node has no metadata log');

function routesFor(node: NodeHandle, client: () => ClusterClient): Route[] {
  const registry = nodeMetrics(node, localGroupsLag(node, client));
  return [
    { method: 'GET', path: '/v1/health', run: () => ok(health(node)) },
    { method: 'GET', path: '/v1/ready', run: () => { const r = readiness(node); return { status: r.ready ? 200 : 503, json: r }; } },
    { method: 'GET', path: '/v1/node', run: () => ok(nodeView(node)) },
    { method: 'GET', path: '/v1/brokers', run: () => ok(brokers(node)) },
    { method: 'GET', path: '/v1/quorum', run: () => { const q = quorum(node, Date.now()); return q === null ? noMetadata() : ok(q); } },
    {
      method: 'GET', path: '/v1/topics', run: async (c) => {
        const t = topics(node);
        if (t === null) return noMetadata();
        return ok({ topics: c.query.get('sizes') === 'false' ? t : await fillSizes(c.client(), t) });
      },
    },
    { method: 'POST', path: '/v1/topics', run: async (c) => ({ status: 201, json: await createTopic(c.client(), c.body as never) }) },
    {
      method: 'GET', path: '/v1/topics/:topic', run: async (c) => {
        const t = topic(node, c.params.topic!);
        return t === null ? notFound(`topic ${c.params.topic}`) : ok((await fillSizes(c.client(), [t]))[0]);
      },
    },
    { method: 'DELETE', path: '/v1/topics/:topic', run: async (c) => ok(await deleteTopic(c.client(), c.params.topic!)) },
    { method: 'GET', path: '/v1/topics/:topic/configs', run: async (c) => ok({ topic: c.params.topic, configs: await topicConfigs(c.client(), c.params.topic!) }) },
    { method: 'PUT', path: '/v1/topics/:topic/configs', run: async (c) => ok(await alterTopicConfigs(c.client(), c.params.topic!, c.body as never)) },
    { method: 'GET', path: '/v1/topics/:topic/messages', run: async (c) => ok(withDecoded(c.node, await readMessages(c.client(), c.params.topic!, messagesQuery(c.query)))) },
    { method: 'POST', path: '/v1/topics/:topic/messages', run: async (c) => ({ status: 201, json: await produceMessage(c.client(), c.params.topic!, c.body as never) }) },
    { method: 'GET', path: '/v1/groups', run: async (c) => ok({ groups: await listGroups(c.client(), node) }) },
    { method: 'GET', path: '/v1/groups/:group', run: async (c) => ok(await anyGroupLag(c.client(), c.params.group!, node)) },
    { method: 'GET', path: '/v1/schemas', run: (c) => ok(schemaSubjects(c.node)) },
    { method: 'GET', path: '/v1/schemas/:subject', run: (c) => ok(schemaSubject(c.node, c.params.subject!)) },
    {
      method: 'GET', path: '/v1/schemas/ids/:id', run: (c) => {
        const id = Number(c.params.id);
        if (!/^\d+$/.test(c.params.id!) || !Number.isSafeInteger(id)) throw new BadRequest('a schema id is a number');
        return ok(schemaById(c.node, id));
      },
    },
    {
      method: 'GET', path: '/v1/mirror', run: () => node.mirror === null
        ? notFound('this node runs no mirror (mirror.enable)')
        : ok(node.mirror.metrics.status(Date.now())),
    },
    { method: 'GET', path: '/v1/links', run: () => ok(linksView(node)) },
    {
      method: 'GET', path: '/metrics', run: async (c) => {
        // MirrorMaker 2's series (its own names) follow the node's when the mirror runs here, then the links' mirror partitions.
        const text = (await registry.metrics()) + (node.mirror === null ? '' : node.mirror.metrics.prometheus(Date.now())) + (node.links?.prometheus() ?? '');
        return wantsOpenMetrics(c.req.headers.accept)
          ? { status: 200, text: toOpenMetrics(text), contentType: OPENMETRICS_CONTENT_TYPE }
          : { status: 200, text, contentType: registry.contentType };
      },
    },
    { method: 'GET', path: '/', run: () => consoleAsset('index.html') },
    { method: 'GET', path: '/console/:file', run: (c) => consoleAsset(c.params.file!) },
  ];
}

/** The route for a method and path, with its `:name` segments (decoded); a known path with another method: 'method'. */
function match(routes: Route[], method: string, path: string): { route: Route; params: Record<string, string> } | 'method' | null {
  const parts = path.split('/');
  let pathKnown = false;
  for (const route of routes) {
    const want = route.path.split('/');
    if (want.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let matched = true;
    for (let i = 0; i < want.length && matched; i++) {
      if (want[i]!.startsWith(':')) {
        if (parts[i] === '') matched = false;
        else params[want[i]!.slice(1)] = decodeURIComponent(parts[i]!);
      } else if (want[i] !== parts[i]) matched = false;
    }
    if (!matched) continue;
    pathKnown = true;
    if (route.method === method || (method === 'HEAD' && route.method === 'GET')) return { route, params };
  }
  return pathKnown ? 'method' : null;
}

const isLoopback = (host: string) => host === 'localhost' || host === '::1' || /^127\./.test(host) || host === '::ffff:127.0.0.1';

/** Why a mutation is refused, or null when it may go ahead. */
export function mutationRefusal(node: NodeHandle, listenerHost: string, req: IncomingMessage): string | null {
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== 'null') {
    let host: string | null = null;
    try { host = new URL(origin).host; } catch { host = null; }
    if (host !== req.headers.host) return `cross-origin request from ${origin} refused`;
  }
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '') && req.method !== 'DELETE') return 'mutations take a JSON body (content-type: application/json)';
  const user = node.config.get('http.admin.username') as string | null;
  const password = node.config.get('http.admin.password') as string | null;
  const auth = req.headers.authorization;
  if (user && password && auth?.startsWith('Basic ')) {
    const given = Buffer.from(auth.slice(6), 'base64');
    const want = Buffer.from(`${user}:${password}`);
    if (given.length === want.length && timingSafeEqual(given, want)) return null;
    return 'wrong admin credentials';
  }
  if (isLoopback(listenerHost)) return null;
  return user && password
    ? 'this listener is not on a loopback address: send the http.admin.username/http.admin.password as HTTP Basic credentials'
    : 'this listener is not on a loopback address and no http.admin.username/http.admin.password is configured: the admin API is read-only';
}

/** A client of this node's own Kafka listener (its first client listener; a wildcard address as loopback). */
function selfClient(node: NodeHandle): ClusterClient {
  const l = node.listeners[0];
  if (l === undefined) throw new ClientError('this node has no Kafka listener');
  const host = l.host === '0.0.0.0' || l.host === '::' || l.host === '' ? '127.0.0.1' : l.host;
  // It dials itself, so the certificate is this node's own: nothing to verify it against here.
  const tls = /SSL/i.test(l.securityProtocol) ? { tls: { rejectUnauthorized: false } } : {};
  // On a SASL listener it logs in as the brokers do to each other (the listener's JAAS entry for
  // sasl.mechanism.inter.broker.protocol): the console is an administrator's tool, and its writes
  // are gated by http.admin.* above. A listener without those credentials answers 502 with why.
  let sasl: ClientSasl | undefined;
  try {
    sasl = clientSaslFor(node.config, l.name);
  } catch (e) {
    throw new ClientError(`cannot log in to listener ${l.name}: ${(e as Error).message}`);
  }
  return new ClusterClient({
    bootstrap: `${host.includes(':') ? `[${host}]` : host}:${l.port}`, clientId: 'logline-http', requestTimeoutMs: 30_000, retries: 3, ...tls, ...(sasl ? { sasl } : {}),
  });
}

/** Starts `node`'s HTTP listener on `address` (port 0: a free one); rejects if it cannot bind (EADDRINUSE). */
export async function startHttpListener(node: NodeHandle, address: { host: string; port: number }): Promise<HttpListener> {
  let client: ClusterClient | null = null;
  const getClient = () => (client ??= selfClient(node));
  const routes = routesFor(node, getClient);
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => { void serve(routes, node, address.host, getClient, req, res); });
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
      // Keep-alive connections (a scraper's, a browser's) would hold close() open.
      for (const s of sockets) s.destroy();
      client?.close();
    }),
  };
}

/** The request's JSON body, at most httpRequestBodyBytesMax bytes (undefined when empty). */
async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > limits.httpRequestBodyBytesMax) throw new HttpError(413, `request body over ${limits.httpRequestBodyBytesMax} bytes`);
    chunks.push(chunk);
  }
  if (bytes === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new BadRequest('the body is not JSON');
  }
}

class HttpError extends Error {
  constructor(readonly status: number, message: string) { super(message); }
}

/** A failure as the API answers it: Kafka's error name, with a status a user can act on. */
function failure(e: unknown): Answer {
  if (e instanceof HttpError) return { status: e.status, json: { error: e.status === 413 ? 'payload too large' : 'error', detail: e.message } };
  if (e instanceof BadRequest) return { status: 400, json: { error: 'bad request', detail: e.message } };
  if (e instanceof KafkaError) {
    const status = e.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION || e.errorCode === ErrorCode.GROUP_ID_NOT_FOUND || e.errorCode === ErrorCode.UNKNOWN_TOPIC_ID ? 404
      : e.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS ? 409
      : isRetriable(e.errorCode) ? 503 : 400;
    return { status, json: { error: e.message.split(':')[0], detail: e.message, errorCode: e.errorCode } };
  }
  // The registry's own error, as its REST API would answer (40401 unknown subject, ...).
  if (e instanceof RegistryError) return { status: e.status, json: { error: 'schema registry', detail: e.message, errorCode: e.errorCode } };
  if (e instanceof NoRegistry) return { status: 404, json: { error: 'no schema registry', detail: e.message } };
  if (e instanceof ClientError) return { status: 502, json: { error: 'kafka listener unreachable', detail: e.message } };
  return { status: 500, json: { error: 'internal error', detail: e instanceof Error ? e.message : String(e) } };
}

async function serve(routes: Route[], node: NodeHandle, listenerHost: string, client: () => ClusterClient, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let answer: Answer;
  let allow: string | null = null;
  try {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname.length > 1 && url.pathname.endsWith('/') ? url.pathname.slice(0, -1) : url.pathname;
    const method = req.method ?? 'GET';
    const found = match(routes, method, path);
    if (found === null) answer = notFound(path);
    else if (found === 'method') {
      allow = routes.filter((r) => match([r], r.method, path) !== null).map((r) => r.method).join(', ');
      answer = { status: 405, json: { error: 'method not allowed', detail: `${method} ${path}` } };
    } else if (found.route.method === 'GET') answer = await found.route.run({ node, params: found.params, query: url.searchParams, body: undefined, client, req });
    else {
      const refusal = mutationRefusal(node, listenerHost, req);
      if (refusal !== null) answer = { status: 403, json: { error: 'forbidden', reason: refusal } };
      else answer = await found.route.run({ node, params: found.params, query: url.searchParams, body: await readBody(req), client, req });
    }
  } catch (e) {
    answer = failure(e);
  }
  const body = 'json' in answer ? JSON.stringify(answer.json, null, 2) + '\n' : answer.text;
  const bytes = typeof body === 'string'
    ? Buffer.from(body.length > limits.httpResponseBytesMax ? JSON.stringify({ error: 'answer too large', bytes: body.length }) : body)
    : body;
  res.writeHead(answer.status, {
    'content-type': 'json' in answer ? 'application/json; charset=utf-8' : answer.contentType,
    'content-length': bytes.length,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...(allow !== null ? { allow } : {}),
    ...('headers' in answer ? answer.headers : {}),
  });
  res.end(req.method === 'HEAD' ? undefined : bytes);
}

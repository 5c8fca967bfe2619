// A load generator for HTTP/1.1 GETs that costs the measured server as little as a client can,
// and itself little enough that one core of it can drive a server on the other: `connections`
// keep-alive sockets, one request in flight on each (no pipelining), each request pre-encoded,
// each answer framed by its Content-Length and compared byte for byte with the answer expected
// (so a wrong or partial answer counts as an error, without a JSON parse per answer). node:http's
// client with an Agent spends several times the CPU per request (ClientRequest, agent bookkeeping,
// header objects), which on 2 cores made the generator, not the server, the measured limit.
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface LoadTarget { path: string; expected: Buffer }
export interface LoadResult { requests: number; errors: number; firstError: string | null; latenciesMs: number[]; elapsedMs: number }

const HEADER_END = Buffer.from('\r\n\r\n');

/** GETs `targets` round robin on `connections` sockets for `seconds`; every request is answered before the result. */
export async function keepAliveGetLoad(host: string, port: number, targets: LoadTarget[], connections: number, seconds: number): Promise<LoadResult> {
  const requests = targets.map((t) => Buffer.from(`GET ${t.path} HTTP/1.1\r\nhost: ${host}:${port}\r\naccept: application/vnd.schemaregistry.v1+json\r\n\r\n`, 'latin1'));
  const latenciesMs: number[] = [];
  let errors = 0;
  let firstError: string | null = null;
  let next = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const fail = (why: string) => { errors++; firstError ??= why; };

  const run = (socket: Socket) => new Promise<void>((resolve, reject) => {
    let pending: Buffer | null = null;
    let current = 0;
    let t0 = 0;
    const sendNext = () => {
      if (performance.now() >= deadline) { socket.end(); resolve(); return; }
      current = next++ % requests.length;
      t0 = performance.now();
      socket.write(requests[current]!);
    };
    socket.on('data', (chunk: Buffer) => {
      pending = pending === null ? chunk : Buffer.concat([pending, chunk]);
      const headerEnd = pending.indexOf(HEADER_END);
      if (headerEnd < 0) return;
      const head = pending.toString('latin1', 0, headerEnd).toLowerCase();
      const m = /\r\ncontent-length:\s*(\d+)/.exec(head);
      if (m === null) { reject(new Error(`an answer without content-length: ${head.slice(0, 200)}`)); socket.destroy(); return; }
      const end = headerEnd + 4 + Number(m[1]);
      if (pending.length < end) return;
      latenciesMs.push(performance.now() - t0);
      const status = head.slice(9, 12);
      if (status !== '200') fail(`GET ${targets[current]!.path}: status ${status}`);
      else if (!pending.subarray(headerEnd + 4, end).equals(targets[current]!.expected)) fail(`GET ${targets[current]!.path}: an unexpected body`);
      if (pending.length > end) { reject(new Error('bytes after an answer to the only request in flight')); socket.destroy(); return; }
      pending = null;
      sendNext();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve());
    sendNext();
  });

  const sockets = await Promise.all(Array.from({ length: connections }, () => new Promise<Socket>((resolve, reject) => {
    const s = connect({ host, port, noDelay: true }, () => { s.off('error', reject); resolve(s); });
    s.once('error', reject);
  })));
  try {
    await Promise.all(sockets.map(run));
  } finally {
    for (const s of sockets) s.destroy();
  }
  return { requests: latenciesMs.length, errors, firstError, latenciesMs, elapsedMs: performance.now() - started };
}

/**
 * The floor to compare a server with, measured in the same run: a node:http server in a child
 * process that answers each path with its bytes from a Map and does nothing else (what any
 * node:http server pays per request, with no routing, state or broker around it).
 */
export async function referenceServer(answers: Map<string, Buffer>, contentType: string): Promise<{ port: number; pid: number; close(): Promise<void> }> {
  const source = `
    const { createServer } = require('node:http');
    const answers = new Map(Object.entries(JSON.parse(process.env.ANSWERS)).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
    const empty = Buffer.alloc(0);
    const server = createServer((req, res) => {
      const body = answers.get(req.url) ?? empty;
      res.writeHead(body.length > 0 ? 200 : 404, { 'content-type': ${JSON.stringify(contentType)}, 'content-length': body.length });
      res.end(body);
    });
    process.on('SIGTERM', () => process.exit(0));
    server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));`;
  const env = { ...process.env, ANSWERS: JSON.stringify(Object.fromEntries([...answers].map(([k, v]) => [k, v.toString('base64')]))) };
  const child = spawn(process.execPath, ['-e', source], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error('the reference server did not start within 30 s')); }, 30_000);
    child.stdout!.on('data', (d: Buffer) => { text += d.toString(); const m = /port (\d+)/.exec(text); if (m) { clearTimeout(timer); resolve(Number(m[1])); } });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`the reference server exited with ${code}`)); });
  });
  return {
    port, pid: child.pid!,
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// The TLS handshake fuzzed: a real ClientHello (and the start of a client's handshake after it),
// mutated by fast-check — bytes overwritten, cut short, garbage appended — sent raw to an SSL
// listener with ssl.client.auth=required. The broker must answer with an alert or a close or just
// wait (its handshake timeout ends that), never crash or leak: every fuzzing socket it holds is gone
// once the fuzzer hangs up, no handler threw, and a real mTLS client is served throughout.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { connect as netConnect, createServer as createNetServer, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { tempDataDir } from '../broker/process-helpers.js';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { ApiKey, decodeResponse, encodeRequestFrame } from '../../src/protocol/index.js';
import { writeDevCerts, type DevCerts } from '../../src/security/index.js';
import { plaintextAndSsl } from './tls-config.js';

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
if (process.env.CI && !hasOpenssl) throw new Error('openssl is needed in CI');
const skip = hasOpenssl ? false : 'openssl is not installed';

let certs: DevCerts;
let server: ServerHandle | null = null;
let port = 0;

before(async () => {
  if (!hasOpenssl) return;
  certs = writeDevCerts(join(mkdtempSync(join(tmpdir(), 'logline-tls-fuzz-')), 'certs'));
  const config = parseBrokerConfig({
    ...plaintextAndSsl(certs),
    'listener.name.ssl.ssl.client.auth': 'required',
  });
  server = await startServer({ config, dataDir: tempDataDir(), logger: { info: () => {}, warn: () => {}, error: () => {} } });
  port = server.listeners.find((l) => l.name === 'SSL')!.port;
});
after(async () => { await server?.close(); });

/** The bytes a TLS client sends first (its ClientHello), captured by a plain TCP server. */
async function clientHello(options: { cert?: string; key?: string; maxVersion?: 'TLSv1.2' | 'TLSv1.3' }): Promise<Buffer> {
  const capture = createNetServer();
  const first = new Promise<Buffer>((resolve) => capture.on('connection', (s) => s.once('data', (d) => { resolve(d); s.destroy(); })));
  await new Promise<void>((r) => capture.listen(0, '127.0.0.1', r));
  const client = tlsConnect({ host: '127.0.0.1', port: (capture.address() as { port: number }).port, servername: 'localhost', ca: readFileSync(certs.caCert), ...options });
  client.on('error', () => {});
  try {
    return await first;
  } finally {
    client.destroy();
    capture.close();
  }
}

/** ApiVersions over a real mTLS connection: the listener still serves. */
async function realClientServed(): Promise<void> {
  const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'localhost', ca: readFileSync(certs.caCert), cert: readFileSync(certs.clientCert), key: readFileSync(certs.clientKey) });
  try {
    await new Promise<void>((resolve, reject) => { socket.once('secureConnect', resolve); socket.once('error', reject); });
    for (const b of encodeRequestFrame(ApiKey.ApiVersions, 3, 9, 'fuzz-check', { clientSoftwareName: 'fuzz', clientSoftwareVersion: '1' })) socket.write(b);
    let got = Buffer.alloc(0);
    await new Promise<void>((resolve, reject) => {
      socket.on('data', (d) => { got = Buffer.concat([got, d]); if (got.length >= 4 && got.length >= 4 + got.readInt32BE(0)) resolve(); });
      socket.once('error', reject);
      socket.once('close', () => reject(new Error('closed before the ApiVersions answer')));
    });
    const body = decodeResponse(ApiKey.ApiVersions, 3, got.subarray(4, 4 + got.readInt32BE(0))).body as { errorCode: number; apiKeys: unknown[] };
    assert.equal(body.errorCode, 0);
    assert.ok(body.apiKeys.length > 10);
  } finally {
    socket.destroy();
  }
}

/** Sends `bytes` raw; waits until the broker closes or `ms` pass, then hangs up. */
function sendRaw(bytes: Buffer, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const s: Socket = netConnect(port, '127.0.0.1', () => s.write(bytes));
    const done = () => { clearTimeout(timer); s.destroy(); resolve(); };
    const timer = setTimeout(done, ms);
    s.on('data', () => {});
    s.on('error', done);
    s.on('close', done);
  });
}

test('fuzz: mutated ClientHellos never crash the SSL listener or leak its connections, and a real mTLS client is served throughout', { skip, timeout: 180_000 }, async () => {
  const seeds = [
    await clientHello({ cert: readFileSync(certs.clientCert, 'utf8'), key: readFileSync(certs.clientKey, 'utf8') }),
    await clientHello({ maxVersion: 'TLSv1.2' }),
    await clientHello({}),
  ];
  for (const s of seeds) assert.equal(s[0], 0x16, 'a TLS handshake record');
  const mutation = fc.record({
    seed: fc.integer({ min: 0, max: seeds.length - 1 }),
    edits: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 12 }),
    cut: fc.option(fc.nat(), { nil: undefined }),
    tail: fc.uint8Array({ maxLength: 300 }),
    repeat: fc.integer({ min: 1, max: 3 }),
  });
  const before = { ...server!.stats };
  let runs = 0;
  await fc.assert(fc.asyncProperty(mutation, async (m) => {
    const hello = Buffer.from(seeds[m.seed]!);
    for (const [at, byte] of m.edits) hello[at % hello.length] = byte;
    const cut = m.cut === undefined ? hello : hello.subarray(0, m.cut % (hello.length + 1));
    await sendRaw(Buffer.concat([...Array.from({ length: m.repeat }, () => cut), m.tail]), 120);
    if (++runs % 50 === 0) await realClientServed();
  }), { numRuns: 150 });
  await realClientServed();
  const stats = server!.stats;
  assert.equal(stats.handlerErrors, before.handlerErrors, 'no handler threw');
  assert.ok(stats.tlsHandshakeFailures > before.tlsHandshakeFailures, 'the broker saw (and counted) broken handshakes');
  // Nothing the fuzzer opened is still held: a handshake that never completed is dropped with the
  // socket, and a completed one (an unmutated hello cannot complete without the rest) is closed.
  const deadline = Date.now() + 10_000;
  while (stats.connectionsOpen > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.equal(stats.connectionsOpen, 0);
});

// What a SASL listener refuses, over raw sockets: a wrong password and an unknown user (the same
// SASL_AUTHENTICATION_FAILED answer, then the connection closes), a mechanism that is not enabled,
// bytes before the handshake, a request other than ApiVersions before authenticating, an
// oversized frame before authenticating, a session that outlived connections.max.reauth.ms
// (KIP-368) or re-authenticated as someone else — while an authenticated client keeps working.
// Then fast-check mutates real handshake and SCRAM frames against the listener: every connection
// gets answers or is closed within a bounded time, and the broker goes on serving.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import fc from 'fast-check';
import { runProcess, tempDataDir } from '../broker/process-helpers.js';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { BrokerConnection, ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode, decodeResponse, encodeRequestFrame } from '../../src/protocol/index.js';
import { parseAddScram, plainClientToken, scramCredentialRecord, ScramClient } from '../../src/security/index.js';
import { limits } from '../../src/util/index.js';

const hasKcat = spawnSync('kcat', ['-V']).status === 0;
const REAUTH_MS = 4000;
let server: ServerHandle;
let port = 0;
let reauthPort = 0;
const logs: string[] = [];

before(async () => {
  const config = parseBrokerConfig({
    'node.id': '1',
    'listeners': 'SASL_PLAINTEXT://127.0.0.1:0,REAUTH://127.0.0.1:0',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,REAUTH:SASL_PLAINTEXT',
    'sasl.enabled.mechanisms': 'SCRAM-SHA-512,PLAIN,OAUTHBEARER',
    'sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="bob-secret";',
    'listener.name.reauth.connections.max.reauth.ms': String(REAUTH_MS),
    'connection.failed.authentication.delay.ms': '50',
    'num.partitions': '1',
  });
  server = await startServer({ config, dataDir: tempDataDir(), logger: { info: (m) => logs.push(m), warn: (m) => logs.push(m), error: (m) => logs.push(m) }, bootstrapRecords: [scramCredentialRecord(parseAddScram('SCRAM-SHA-512=[name=admin,password=admin-secret]'))] });
  port = server.listeners.find((l) => l.name === 'SASL_PLAINTEXT')!.port;
  reauthPort = server.listeners.find((l) => l.name === 'REAUTH')!.port;
});
after(async () => { await server?.close(); });

/** A raw connection: send requests, read responses in order, and see whether the broker closed it. */
class Raw {
  private buffered = Buffer.alloc(0);
  private readonly frames: Buffer[] = [];
  private waiter: (() => void) | null = null;
  closed = false;
  private nextId = 1;
  private constructor(readonly socket: Socket) {
    socket.on('data', (d) => {
      this.buffered = Buffer.concat([this.buffered, d]);
      while (this.buffered.length >= 4 && this.buffered.length >= 4 + this.buffered.readInt32BE(0)) {
        const n = this.buffered.readInt32BE(0);
        this.frames.push(this.buffered.subarray(4, 4 + n));
        this.buffered = this.buffered.subarray(4 + n);
      }
      this.waiter?.();
    });
    socket.on('close', () => { this.closed = true; this.waiter?.(); });
    socket.on('error', () => {});
  }
  static open(p = port): Promise<Raw> {
    return new Promise((resolve, reject) => { const s = connect(p, '127.0.0.1', () => resolve(new Raw(s))); s.once('error', reject); });
  }
  write(bytes: Buffer | Buffer[]): void { for (const b of Array.isArray(bytes) ? bytes : [bytes]) this.socket.write(b); }
  /** The next frame, or null once the broker closed the connection (or after `ms`). */
  async next(ms = 5000): Promise<Buffer | null> {
    const deadline = Date.now() + ms;
    while (this.frames.length === 0 && !this.closed && Date.now() < deadline) {
      await new Promise<void>((r) => { this.waiter = r; setTimeout(r, Math.max(1, deadline - Date.now())); });
      this.waiter = null;
    }
    return this.frames.shift() ?? null;
  }
  async request(apiKey: number, version: number, body: object): Promise<Record<string, any> | null> {
    this.write(encodeRequestFrame(apiKey, version, this.nextId++, 'raw', body));
    const f = await this.next();
    return f === null ? null : decodeResponse(apiKey, version, f).body;
  }
  async waitClosed(ms = 5000): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!this.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    return this.closed;
  }
  close(): void { this.socket.destroy(); }
}

async function scramLogin(raw: Raw, user: string, password: string): Promise<Record<string, any>> {
  assert.equal((await raw.request(ApiKey.SaslHandshake, 1, { mechanism: 'SCRAM-SHA-512' }))!.errorCode, ErrorCode.NONE);
  const client = new ScramClient('SCRAM-SHA-512', user, password, 'rawclientnonce');
  const first = (await raw.request(ApiKey.SaslAuthenticate, 2, { authBytes: client.first() }))!;
  assert.equal(first.errorCode, ErrorCode.NONE);
  return (await raw.request(ApiKey.SaslAuthenticate, 2, { authBytes: client.final(first.authBytes) }))!;
}

async function plainLogin(raw: Raw, user: string, password: string): Promise<Record<string, any>> {
  assert.equal((await raw.request(ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' }))!.errorCode, ErrorCode.NONE);
  return (await raw.request(ApiKey.SaslAuthenticate, 2, { authBytes: plainClientToken(user, password) }))!;
}

const metadataBody = { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false };

/** An authenticated client of our own that must keep working through every refusal. */
async function bystanderWorks(): Promise<void> {
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${port}`, sasl: { mechanism: 'SCRAM-SHA-512', username: 'admin', password: 'admin-secret' } });
  try {
    const t = await client.topic('sasl-bystander', true);
    assert.equal(t.partitions.length, 1);
  } finally {
    client.close();
  }
}

test('SCRAM: a wrong password and an unknown user get the same SASL_AUTHENTICATION_FAILED, then the connection closes', async () => {
  const answers = [];
  for (const [user, password] of [['admin', 'wrong'], ['nobody', 'wrong']] as const) {
    const raw = await Raw.open();
    const r = await scramLogin(raw, user, password);
    assert.equal(r.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
    answers.push(r.errorMessage);
    assert.equal(await raw.waitClosed(), true, 'closed after the failure delay');
  }
  assert.equal(answers[0], answers[1]);
  assert.match(answers[0], /invalid credentials with SASL mechanism SCRAM-SHA-512/);
  const ok = await Raw.open();
  const r = await scramLogin(ok, 'admin', 'admin-secret');
  assert.equal(r.errorCode, ErrorCode.NONE);
  assert.equal((await ok.request(ApiKey.Metadata, 9, metadataBody))!.brokers.length, 1);
  ok.close();
  await bystanderWorks();
});

test('PLAIN: a wrong password fails and closes; the right one is served', async () => {
  const bad = await Raw.open();
  const r = await plainLogin(bad, 'alice', 'nope');
  assert.equal(r.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
  assert.match(r.errorMessage, /Invalid username or password/);
  assert.equal(await bad.waitClosed(), true);
  const good = await Raw.open();
  assert.equal((await plainLogin(good, 'alice', 'alice-secret')).errorCode, ErrorCode.NONE);
  assert.ok((await good.request(ApiKey.Metadata, 9, metadataBody)) !== null);
  good.close();
});

test('kcat with a wrong password is refused with the broker\'s message', { skip: hasKcat ? false : 'kcat is not installed', timeout: 30_000 }, async () => {
  const r = await runProcess('kcat', ['-L', '-b', `127.0.0.1:${port}`, '-X', 'security.protocol=SASL_PLAINTEXT', '-X', 'sasl.mechanism=PLAIN',
    '-X', 'sasl.username=alice', '-X', 'sasl.password=wrong', '-m', '3'], null, 20_000);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /Invalid username or password/);
  await bystanderWorks();
});

test('a mechanism not enabled answers UNSUPPORTED_SASL_MECHANISM with the enabled ones, then closes', async () => {
  const raw = await Raw.open();
  const r = await raw.request(ApiKey.SaslHandshake, 1, { mechanism: 'SCRAM-SHA-256' });
  assert.deepEqual(r, { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms: ['SCRAM-SHA-512', 'PLAIN', 'OAUTHBEARER'] });
  assert.equal(await raw.waitClosed(), true);
  await bystanderWorks();
});

test('requests other than ApiVersions before authenticating close the connection with no answer; ApiVersions is answered', async () => {
  const raw = await Raw.open();
  const versions = (await raw.request(ApiKey.ApiVersions, 3, { clientSoftwareName: 'raw', clientSoftwareVersion: '1' }))!;
  assert.ok(versions.apiKeys.some((k: { apiKey: number }) => k.apiKey === ApiKey.SaslAuthenticate));
  assert.equal(await raw.request(ApiKey.Metadata, 9, metadataBody), null);
  assert.equal(raw.closed, true);
  // A handshake alone is not authentication either.
  const half = await Raw.open();
  assert.equal((await half.request(ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' }))!.errorCode, ErrorCode.NONE);
  assert.equal(await half.request(ApiKey.Metadata, 9, metadataBody), null);
  await bystanderWorks();
});

test('bytes before the handshake, and a frame larger than a SASL token, close the connection with no answer', async () => {
  for (const bytes of [Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'), Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]),
    Buffer.from([0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff])]) {
    const raw = await Raw.open();
    raw.write(bytes);
    assert.equal(await raw.next(), null);
    assert.equal(raw.closed, true);
  }
  // A size prefix above limits.saslTokenBytesMax is refused before the broker buffers the body.
  const big = await Raw.open();
  const prefix = Buffer.alloc(4);
  prefix.writeInt32BE(limits.saslTokenBytesMax + 1);
  big.write(prefix);
  assert.equal(await big.waitClosed(), true);
  await bystanderWorks();
});

test('handshake v0: the raw PLAIN token that follows authenticates the connection', async () => {
  const raw = await Raw.open();
  assert.equal((await raw.request(ApiKey.SaslHandshake, 0, { mechanism: 'PLAIN' }))!.errorCode, ErrorCode.NONE);
  const token = plainClientToken('bob', 'bob-secret');
  const size = Buffer.alloc(4);
  size.writeInt32BE(token.length);
  raw.write([size, token]);
  assert.deepEqual(await raw.next(), Buffer.alloc(0));
  assert.ok((await raw.request(ApiKey.Metadata, 9, metadataBody)) !== null);
  raw.close();
});

test('KIP-368: a session past connections.max.reauth.ms is closed at its next request; one that re-authenticated goes on; a new principal is refused', { timeout: 30_000 }, async () => {
  const stale = await Raw.open(reauthPort);
  const renewed = await Raw.open(reauthPort);
  const startedMs = Date.now();
  // Our own client re-authenticates by itself when its session nears its end.
  const ours = await BrokerConnection.open({ host: '127.0.0.1', port: reauthPort, sasl: { mechanism: 'SCRAM-SHA-512', username: 'admin', password: 'admin-secret' } });
  const first = await plainLogin(stale, 'alice', 'alice-secret');
  assert.equal(first.errorCode, ErrorCode.NONE);
  assert.ok(first.sessionLifetimeMs > 0n && first.sessionLifetimeMs <= BigInt(REAUTH_MS));
  assert.equal((await plainLogin(renewed, 'alice', 'alice-secret')).errorCode, ErrorCode.NONE);
  await new Promise((r) => setTimeout(r, REAUTH_MS / 2));
  // Re-authentication on the same connection, as the same principal.
  assert.equal((await plainLogin(renewed, 'alice', 'alice-secret')).errorCode, ErrorCode.NONE);
  // Past the first session's end (measured from before it began).
  await new Promise((r) => setTimeout(r, Math.max(0, startedMs + REAUTH_MS + 300 - Date.now())));
  assert.equal(await stale.request(ApiKey.Metadata, 9, metadataBody), null, 'the expired session is closed');
  assert.ok((await renewed.request(ApiKey.Metadata, 9, metadataBody)) !== null, 'the renewed session is served');
  const viaOurs = await ours.send(ApiKey.Metadata, 9, metadataBody);
  assert.equal(viaOurs.brokers.length, 1, 'our client logged in again and was served');
  ours.close();
  const r = await plainLogin(renewed, 'bob', 'bob-secret');
  assert.equal(r.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
  assert.match(r.errorMessage, /Cannot change principals during re-authentication from User:alice to User:bob/);
  assert.equal(await renewed.waitClosed(), true);
});

test('fuzz: mutated handshake and SCRAM frames never crash or hang the listener, and it keeps serving', { timeout: 120_000 }, async () => {
  const scram = new ScramClient('SCRAM-SHA-512', 'admin', 'admin-secret', 'fuzznonce');
  const seeds = [
    Buffer.concat(encodeRequestFrame(ApiKey.SaslHandshake, 1, 1, 'fuzz', { mechanism: 'SCRAM-SHA-512' })),
    Buffer.concat(encodeRequestFrame(ApiKey.SaslHandshake, 0, 1, 'fuzz', { mechanism: 'PLAIN' })),
    Buffer.concat(encodeRequestFrame(ApiKey.SaslAuthenticate, 2, 2, 'fuzz', { authBytes: scram.first() })),
    Buffer.concat(encodeRequestFrame(ApiKey.SaslAuthenticate, 1, 3, 'fuzz', { authBytes: Buffer.from('c=biws,r=fuzznonceXYZ,p=AAAA') })),
    Buffer.concat(encodeRequestFrame(ApiKey.SaslAuthenticate, 0, 2, 'fuzz', { authBytes: plainClientToken('alice', 'alice-secret') })),
  ];
  const mutation = fc.record({
    prefix: fc.integer({ min: 0, max: seeds.length - 1 }),
    target: fc.integer({ min: 0, max: seeds.length - 1 }),
    edits: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 8 }),
    cut: fc.option(fc.nat(), { nil: undefined }),
    tail: fc.uint8Array({ maxLength: 64 }),
  });
  const errorsBefore = server.stats.handlerErrors;
  await fc.assert(fc.asyncProperty(mutation, async (m) => {
    const frame = Buffer.from(seeds[m.target]!);
    for (const [at, byte] of m.edits) frame[at % frame.length] = byte;
    const mutated = Buffer.concat([m.cut === undefined ? frame : frame.subarray(0, m.cut % (frame.length + 1)), m.tail]);
    const raw = await Raw.open();
    try {
      // A valid handshake first, sometimes, so the mutated frame reaches the SCRAM exchange.
      if (m.prefix === 0) raw.write(seeds[0]!);
      raw.write(mutated);
      // Bounded: answers arrive or the connection closes promptly; a partial frame just waits (our side ends it).
      for (let i = 0; i < 3 && !raw.closed; i++) if ((await raw.next(150)) === null) break;
    } finally {
      raw.close();
    }
  }), { numRuns: 100 });
  assert.equal(server.stats.handlerErrors, errorsBefore, 'no handler threw');
  await bystanderWorks();
});

test('OAUTHBEARER: kcat\'s unsecured token (librdkafka\'s builtin) logs in as its principal', { skip: hasKcat ? false : 'kcat is not installed', timeout: 30_000 }, async () => {
  const r = await runProcess('kcat', ['-L', '-b', `127.0.0.1:${port}`, '-X', 'security.protocol=SASL_PLAINTEXT', '-X', 'sasl.mechanism=OAUTHBEARER',
    '-X', 'enable.sasl.oauthbearer.unsecure.jwt=true', '-X', 'sasl.oauthbearer.config=principal=dave', '-m', '10'], null, 20_000);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(logs.some((l) => /authenticated as User:dave$/.test(l)), logs.filter((l) => l.includes('SASL')).join('\n'));
});

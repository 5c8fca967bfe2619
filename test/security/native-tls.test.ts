// The TLS addon's server sessions (src/security/native-tls.ts) against node:tls clients over real
// sockets: TLSv1.3 and TLSv1.2 echo megabytes intact, whether ciphertext arrives in whole socket
// reads or a byte at a time; a client that asked for 512-byte records gets them; client
// certificates are checked as ssl.client.auth says; garbage, before or after the handshake, is an
// error and never a crash. The listeners' own tests (tls, sasl-*, acl, tls-fuzz) run on it too.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { runProcess } from '../broker/process-helpers.js';
import { listenerTls, nativeTlsAvailable, NativeTlsContext, NativeTlsSession, writeDevCerts, type ClientAuth, type DevCerts, type ListenerTls } from '../../src/security/index.js';

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
if (process.env.CI && !nativeTlsAvailable() && process.env.LOGLINE_TLS_ENGINE !== 'node') throw new Error('CI builds build/tls-session.node (scripts/build-native.mjs)');
const skip = !nativeTlsAvailable() ? 'the TLS addon is not built' : !hasOpenssl ? 'openssl is not installed' : false;

let certs: DevCerts;
let stranger: DevCerts;

before(() => {
  if (skip) return;
  certs = writeDevCerts(join(mkdtempSync(join(tmpdir(), 'logline-native-tls-')), 'certs'), { clientName: 'alice' });
  // Another CA's client certificate: untrusted here.
  stranger = writeDevCerts(join(mkdtempSync(join(tmpdir(), 'logline-native-tls-other-')), 'certs'), { clientName: 'mallory' });
});

function settings(clientAuth: ClientAuth, cipherSuites: string[] = []): ListenerTls {
  const values: Record<string, unknown> = {
    'ssl.keystore.type': 'PEM', 'ssl.keystore.location': join(certs.dir, 'broker.pem'), 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': certs.caCert,
    'ssl.client.auth': clientAuth, 'ssl.enabled.protocols': ['TLSv1.2', 'TLSv1.3'], 'ssl.cipher.suites': cipherSuites, 'ssl.principal.mapping.rules': 'DEFAULT',
  };
  return listenerTls((key) => values[key] ?? null);
}

interface Served { peer: ReturnType<NativeTlsSession['peer']> | null; error: string | null }

/**
 * An echo server on NativeTlsSession: the handshake, then every decrypted byte sent back
 * encrypted. `feedBytes` feeds ciphertext in pieces of that size; after `endAfterBytes` the server
 * closes the session. Resolves its port and what each connection's session saw.
 */
async function echoServer(tls: ListenerTls, feedBytes = Infinity, endAfterBytes = Infinity) {
  const context = new NativeTlsContext(tls);
  const served: Served[] = [];
  const server = createServer((socket: Socket) => {
    const session = new NativeTlsSession(context);
    const record: Served = { peer: null, error: null };
    served.push(record);
    const plain = Buffer.alloc(64 * 1024);
    let done = false;
    let echoed = 0;
    socket.on('error', () => {});
    socket.on('close', () => session.close());
    socket.on('data', (data: Buffer) => {
      try {
        for (let at = 0; at < data.length; at += Math.min(feedBytes, data.length - at)) {
          session.feed(data, at, Math.min(feedBytes, data.length - at));
          if (!done) {
            done = session.handshake();
            const out = session.output();
            if (out !== null) socket.write(out);
            if (done) record.peer = session.peer();
          }
          if (!done) continue;
          for (let n = session.read(plain); n !== 0; n = session.read(plain)) {
            if (n < 0) { socket.end(); return; }
            socket.write(session.encrypt([Buffer.from(plain.subarray(0, n))]));
            echoed += n;
            if (echoed >= endAfterBytes) {
              session.shutdown();
              const closeNotify = session.output();
              if (closeNotify !== null) socket.end(closeNotify); else socket.end();
              return;
            }
          }
        }
      } catch (err) {
        record.error = (err as Error).message;
        const out = session.output();
        if (out !== null) socket.write(out);
        socket.destroy();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as { port: number }).port, served, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** Sends `payload` over TLS in uneven writes and resolves what came back (the echo), or the error. */
function echo(port: number, payload: Buffer, options: ConnectionOptions = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'localhost', ca: readFileSync(certs.caCert), ...options }, () => {
      for (let at = 0; at < payload.length;) {
        const n = Math.min(payload.length - at, 1 + ((at * 7919) % 70_000));
        socket.write(payload.subarray(at, at + n));
        at += n;
      }
    });
    const got: Buffer[] = [];
    let bytes = 0;
    socket.on('data', (d: Buffer) => {
      got.push(d);
      bytes += d.length;
      if (bytes >= payload.length) { socket.end(); resolve(Buffer.concat(got)); }
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`closed after ${bytes} of ${payload.length} bytes`)));
  });
}

test('TLSv1.3 and TLSv1.2 clients get megabytes back intact, from whole reads and from a byte at a time', { skip, timeout: 60_000 }, async () => {
  for (const feedBytes of [Infinity, 1]) {
    const server = await echoServer(settings('none'), feedBytes);
    try {
      for (const maxVersion of ['TLSv1.3', 'TLSv1.2'] as const) {
        const payload = randomBytes(feedBytes === 1 ? 200_000 : 3_000_000);
        const back = await echo(server.port, payload, { maxVersion });
        assert.ok(back.equals(payload), `${maxVersion}, fed ${feedBytes} at a time`);
      }
      assert.deepEqual(server.served.map((s) => [s.peer?.protocol, s.error]), [['TLSv1.3', null], ['TLSv1.2', null]]);
      assert.equal(server.served[0]!.peer!.getPeerX509Certificate(), undefined, 'no client certificate asked for');
    } finally {
      await server.close();
    }
  }
});

test('a client that asked for 512-byte records (RFC 6066 max_fragment_length) gets them', { skip, timeout: 30_000 }, async () => {
  const payload = 'x'.repeat(5000) + '\n';
  const server = await echoServer(settings('none'), Infinity, payload.length);
  try {
    // Node's client cannot ask for it; openssl s_client can (and refuses a longer record).
    const r = await runProcess('openssl', ['s_client', '-connect', `127.0.0.1:${server.port}`, '-CAfile', certs.caCert, '-maxfraglen', '512', '-tls1_2', '-quiet', '-ign_eof'], payload, 20_000);
    assert.equal(r.stdout.slice(0, payload.length), payload, `echoed ${r.stdout.length} bytes; ${r.stderr.slice(0, 300)}`);
    assert.equal(server.served[0]!.error, null);
  } finally {
    await server.close();
  }
});

test('client certificates: required refuses none and an untrusted one; requested lets both in and reports the untrusted one', { skip, timeout: 60_000 }, async () => {
  const alice = { cert: readFileSync(certs.clientCert), key: readFileSync(certs.clientKey) };
  const mallory = { cert: readFileSync(stranger.clientCert), key: readFileSync(stranger.clientKey) };
  const payload = randomBytes(10_000);
  const required = await echoServer(settings('required'));
  try {
    assert.ok((await echo(required.port, payload, alice)).equals(payload));
    const cert = required.served[0]!.peer!.getPeerX509Certificate();
    assert.ok(cert instanceof X509Certificate && /CN=alice/.test(cert.subject), String(cert?.subject));
    assert.equal(required.served[0]!.peer!.authorized, true);
    await assert.rejects(echo(required.port, payload, { maxVersion: 'TLSv1.2' }));
    await assert.rejects(echo(required.port, payload, { ...mallory, maxVersion: 'TLSv1.2' }));
    assert.match(required.served[1]!.error ?? '', /handshake failed/);
    assert.match(required.served[2]!.error ?? '', /handshake failed/);
  } finally {
    await required.close();
  }
  const requested = await echoServer(settings('requested'));
  try {
    assert.ok((await echo(requested.port, payload)).equals(payload), 'no certificate is fine');
    assert.ok((await echo(requested.port, payload, mallory)).equals(payload), 'the handshake lets an untrusted one through');
    assert.equal(requested.served[0]!.peer!.getPeerX509Certificate(), undefined);
    const untrusted = requested.served[1]!.peer!;
    assert.equal(untrusted.authorized, false, 'and says it is not trusted');
    assert.ok(untrusted.authorizationError !== null);
  } finally {
    await requested.close();
  }
});

test('garbage instead of a ClientHello, and garbage after the handshake, are errors, not crashes; the server keeps serving', { skip, timeout: 60_000 }, async () => {
  const server = await echoServer(settings('none'));
  try {
    for (let i = 0; i < 20; i++) {
      const raw = netConnect(server.port, '127.0.0.1');
      raw.on('error', () => {});
      // A TLS record header (handshake, TLS 1.2) and random bytes, or random bytes alone.
      raw.end(Buffer.concat([i % 2 === 0 ? Buffer.from([22, 3, 3, 0, 200]) : Buffer.alloc(0), randomBytes(50 + i * 37)]));
      // Refused and closed, or (a record announced longer than what came) still waiting for the
      // rest, which a listener's handshake timeout ends: either way the client goes.
      await new Promise((r) => { raw.on('close', r); setTimeout(r, 1000).unref(); });
      raw.destroy();
    }
    // After a handshake: a proxy between a real client and the server slips random bytes in
    // where records should be.
    let toServer: Socket | null = null;
    const proxy = createServer((inbound) => {
      const outbound = netConnect(server.port, '127.0.0.1');
      toServer = outbound;
      inbound.pipe(outbound).on('error', () => {});
      outbound.pipe(inbound).on('error', () => {});
      inbound.on('error', () => outbound.destroy());
      outbound.on('error', () => inbound.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const socket = tlsConnect({ host: '127.0.0.1', port: (proxy.address() as { port: number }).port, servername: 'localhost', ca: readFileSync(certs.caCert) });
    socket.on('error', () => {});
    await new Promise<void>((resolve) => socket.once('secureConnect', resolve));
    // The client's Finished is on its way through the proxy: inject once the server has it.
    while (server.served.at(-1)?.peer === null) await new Promise((r) => setTimeout(r, 5));
    const closed = new Promise((r) => socket.on('close', r));
    toServer!.write(randomBytes(5000));
    await closed;
    proxy.close();
    assert.match(server.served.at(-1)!.error ?? '', /read failed/, `the session refused what was not a record: ${JSON.stringify(server.served.map((x) => x.error))}`);
    const payload = randomBytes(100_000);
    assert.ok((await echo(server.port, payload)).equals(payload), 'a real client is still served');
    const errors = server.served.map((s) => s.error).filter((e) => e !== null);
    assert.ok(errors.length >= 10, `garbage was refused: ${errors.length} errors`);
  } finally {
    await server.close();
  }
});

test('a session fed random records after its handshake throws on read and can be closed', { skip, timeout: 30_000 }, async () => {
  const server = await echoServer(settings('none'));
  try {
    // Complete a handshake with a real client, then drive a second session by hand with garbage.
    const payload = randomBytes(1000);
    assert.ok((await echo(server.port, payload)).equals(payload));
    const session = new NativeTlsSession(new NativeTlsContext(settings('none')));
    const garbage = Buffer.concat([Buffer.from([23, 3, 3, 0x40, 0]), randomBytes(0x4000)]);
    session.feed(garbage, 0, garbage.length);
    assert.throws(() => session.handshake(), /handshake failed/);
    session.close();
    assert.throws(() => session.read(Buffer.alloc(10)), /closed/);
  } finally {
    await server.close();
  }
});

test('ssl.cipher.suites naming only TLSv1.3 suites leaves TLSv1.2 clients no cipher (as node:tls does), and TLSv1.3 gets the one named', { skip, timeout: 30_000 }, async () => {
  const server = await echoServer(settings('none', ['TLS_AES_128_GCM_SHA256']));
  try {
    await assert.rejects(echo(server.port, randomBytes(100), { maxVersion: 'TLSv1.2' }));
    const payload = randomBytes(1000);
    let cipher = '';
    const socket = tlsConnect({ host: '127.0.0.1', port: server.port, servername: 'localhost', ca: readFileSync(certs.caCert) });
    await new Promise<void>((resolve, reject) => { socket.once('secureConnect', () => { cipher = socket.getCipher().name; resolve(); }); socket.once('error', reject); });
    socket.destroy();
    assert.equal(cipher, 'TLS_AES_128_GCM_SHA256');
    assert.ok((await echo(server.port, payload)).equals(payload));
  } finally {
    await server.close();
  }
});

test('a handle of the wrong kind is a TypeError, not a crash', { skip }, () => {
  const addon = createRequire(import.meta.url)(new URL('../../../build/tls-session.node', import.meta.url).pathname) as {
    sessionNew(context: object): object; sessionRead(session: object, b: Buffer, o: number, n: number): number;
  };
  const context = new NativeTlsContext(settings('none')).handle;
  const session = addon.sessionNew(context);
  assert.throws(() => addon.sessionNew(session), TypeError);
  assert.throws(() => addon.sessionRead(context, Buffer.alloc(8), 0, 8), TypeError);
  assert.throws(() => addon.sessionRead(session, Buffer.alloc(8), 4, 8), RangeError);
});

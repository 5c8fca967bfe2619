// The fault proxy's own faults, against an echo server: latency and a bandwidth limit slow the
// bytes down (checked only as lower bounds, which load cannot break), a stalled proxy passes
// nothing until healed and then everything, dropAll resets both sides, refuse resets new
// connections, and a slow client direction holds the server's writes back rather than buffering
// them in the proxy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { FaultProxy, RELAY_BUFFER_BYTES } from './fault-proxy.js';
import { within } from './process-helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function echoServer(): Promise<{ server: Server; port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); s.on('error', () => {}); s.pipe(s); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, port: (server.address() as { port: number }).port, sockets };
}

/** Connects through the proxy; `received()` is every byte echoed back so far. */
async function client(port: number): Promise<{ socket: Socket; received: () => number; closed: Promise<string> }> {
  const socket = connect({ host: '127.0.0.1', port });
  let n = 0;
  socket.on('data', (d: Buffer) => { n += d.length; });
  const closed = new Promise<string>((r) => { socket.on('error', (e) => r((e as NodeJS.ErrnoException).code ?? e.message)); socket.on('close', () => r('closed')); });
  // A refused connection may be reset before or after it is connected.
  await within(10_000, 'connecting to the proxy', Promise.race([new Promise<void>((r) => socket.once('connect', () => r())), closed]));
  return { socket, received: () => n, closed };
}

async function untilReceived(c: { received: () => number }, bytes: number, what: string): Promise<number> {
  const started = Date.now();
  await within(30_000, what, (async () => { while (c.received() < bytes) await sleep(5); })());
  return Date.now() - started;
}

test('fault proxy: latency, bandwidth, stall and heal, drops, refusals, and a slow client direction that holds the server back', { timeout: 120_000 }, async () => {
  const echo = await echoServer();
  const proxy = await FaultProxy.start({ host: '127.0.0.1', port: echo.port });
  try {
    // Faithful: everything comes back.
    const c = await client(proxy.port);
    c.socket.write(Buffer.alloc(100_000, 1));
    await untilReceived(c, 100_000, 'an echo through a faithful proxy');

    // Latency each way: a round trip takes at least twice it.
    proxy.set({ toServer: { latencyMs: 150 }, toClient: { latencyMs: 150 } });
    let before = c.received();
    c.socket.write(Buffer.from('ping'));
    const rtt = await untilReceived(c, before + 4, 'an echo with latency');
    assert.ok(rtt >= 280, `a round trip with 150 ms each way took ${rtt} ms`);

    // Bandwidth: 200 KB back at 100 KB/s takes at least ~1.8 s.
    proxy.set({ toServer: { latencyMs: 0 }, toClient: { latencyMs: 0, bytesPerSecond: 100_000 } });
    before = c.received();
    c.socket.write(Buffer.alloc(200_000, 2));
    const slow = await untilReceived(c, before + 200_000, 'an echo at 100 KB/s');
    assert.ok(slow >= 1700, `200 KB at 100 KB/s came back in ${slow} ms`);

    // A slow client direction holds the server back: what it wrote waits in its own socket, the
    // proxy holds at most its relay buffer (plus kernel buffers), and it all arrives in the end.
    proxy.set({ toClient: { bytesPerSecond: 20_000 } });
    const [serverSide] = [...echo.sockets];
    before = c.received();
    c.socket.write(Buffer.alloc(8 * 1024 * 1024, 3));
    await within(30_000, 'the echo server backed up', (async () => { while (serverSide!.writableLength === 0) await sleep(20); })());
    assert.ok(c.received() - before < 8 * 1024 * 1024, 'not all passed yet');
    proxy.set({ toClient: { bytesPerSecond: 0 } });
    await untilReceived(c, before + 8 * 1024 * 1024, 'the backlog after the limit is lifted');
    assert.ok(RELAY_BUFFER_BYTES <= 1024 * 1024);

    // Stalled (half-open): nothing passes, the connection stays open; healed, everything passes.
    proxy.set({ stalled: true });
    before = c.received();
    c.socket.write(Buffer.from('held'));
    await sleep(500);
    assert.equal(c.received(), before, 'nothing passes a stalled proxy');
    assert.equal(proxy.openConnections, 1);
    proxy.heal();
    await untilReceived(c, before + 4, 'what was held, after healing');

    // Dropped: both sides see a reset.
    const dropped = proxy.dropAll();
    assert.equal(dropped, 1);
    assert.equal(await within(10_000, 'the client seeing the drop', c.closed), 'ECONNRESET');

    // Refused: new connections are reset at once.
    proxy.set({ refuse: true });
    const r = await client(proxy.port);
    assert.match(await within(10_000, 'a refused connection closing', r.closed), /ECONNRESET|closed/);
    proxy.heal();
    const again = await client(proxy.port);
    again.socket.write(Buffer.from('back'));
    await untilReceived(again, 4, 'an echo after the refusals');
    again.socket.destroy();
    assert.ok(proxy.accepted >= 3);
  } finally {
    await proxy.close();
    for (const s of echo.sockets) s.destroy();
    await new Promise<void>((r) => echo.server.close(() => r()));
  }
});

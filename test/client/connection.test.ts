import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { BrokerConnection } from '../../src/client/index.js';
import { FrameSplitter, decodeRequestHeader, encodeResponseFrame } from '../../src/protocol/index.js';

test('a broker that answers pipelined requests out of order fails every one of them, the first included; none is left waiting', async () => {
  // Answers the two requests it reads in reverse order.
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    const splitter = new FrameSplitter(1 << 20);
    const held: number[] = [];
    socket.on('data', (chunk) => {
      for (const frame of splitter.push(chunk)) {
        held.push(decodeRequestHeader(frame).header.correlationId);
        if (held.length === 2) {
          for (const id of held.reverse()) for (const c of encodeResponseFrame(18, 0, id, { errorCode: 0, apiKeys: [], throttleTimeMs: 0 })) socket.write(c);
        }
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  // A request timeout far past the 10 s the test waits: a request left waiting is not ended by it.
  const conn = await BrokerConnection.open({ host: '127.0.0.1', port, requestTimeoutMs: 600_000 });
  try {
    let timer: NodeJS.Timeout | undefined;
    const leftWaiting = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('a request was left waiting')), 10_000); });
    const outcomes = await Promise.race([Promise.allSettled([conn.send(18, 0, {}), conn.send(18, 0, {})]), leftWaiting]).finally(() => clearTimeout(timer));
    assert.deepEqual(outcomes.map((o) => o.status), ['rejected', 'rejected']);
    for (const o of outcomes) assert.match(String((o as PromiseRejectedResult).reason), /out of order: expected 1, got 2/);
    assert.equal(conn.closed, true);
  } finally {
    conn.close();
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

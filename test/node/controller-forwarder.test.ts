// The broker's forwarding channel to the active controller when the metadata quorum replaces the
// controller it is talking to. Found by the network-cut run (cluster-netcuts): a controller cut off
// from the other nodes never answers, so a broker heartbeat forwarded to it waited for the whole
// request timeout (30 s) while the new controller fenced that broker for missing its heartbeats,
// and every partition lost its leaders.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { ForwardingControllerChannel } from '../../src/node/controller-forwarder.js';
import type { ControllerService } from '../../src/node/controller-service.js';
import type { LogMetadata } from '../../src/node/metadata-log.js';
import { quietLogger } from '../../src/node/index.js';
import { ErrorCode } from '../../src/protocol/index.js';
import { within } from '../broker/process-helpers.js';

/** A controller that takes requests and never answers (what a node behind a cut looks like). */
async function silentController(): Promise<{ server: Server; port: number; requests: () => number; close(): void }> {
  const sockets: Socket[] = [];
  let bytes = 0;
  const server = createServer((s) => { sockets.push(s); s.on('data', (d) => { bytes += d.length; }); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { server, port, requests: () => bytes, close: () => { for (const s of sockets) s.destroy(); server.close(); } };
}

/** The parts of LogMetadata the channel reads, with a leader the test moves. */
function quorum(endpoints: Map<number, number>) {
  const md = {
    leaderId: undefined as number | undefined,
    controllerEndpoint: (id: number) => (endpoints.has(id) ? { host: '127.0.0.1', port: endpoints.get(id)! } : undefined),
    // A leader change commits no data entry, so it is not announced through onChange.
    onChange: () => {},
    view: () => { throw new Error('not used by heartbeats'); },
  };
  return { md, elect(id: number) { md.leaderId = id; } };
}

const heartbeat = { brokerId: 3, brokerEpoch: 7n, currentMetadataOffset: 10n, wantFence: false, wantShutDown: false, offlineLogDirs: [] };

test('a heartbeat forwarded to a controller that the quorum replaces answers NOT_CONTROLLER at once, and the next one goes to the new controller', { timeout: 60_000 }, async () => {
  const old = await silentController();
  const successor = await silentController();
  const { md, elect } = quorum(new Map([[1, old.port], [2, successor.port]]));
  const local = { isActive: false } as unknown as ControllerService;
  // A request timeout far beyond the test's waits: only the change of leader can end the request.
  const channel = new ForwardingControllerChannel(md as unknown as LogMetadata, local, { nodeId: 3, requestTimeoutMs: 600_000, logger: quietLogger });
  try {
    elect(1);
    const first = channel.brokerHeartbeat(heartbeat);
    await within(10_000, 'the heartbeat reaching node 1', (async () => { while (old.requests() === 0) await new Promise((r) => setTimeout(r, 10)); })());
    elect(2);
    const answer = await within(10_000, 'the answer to the heartbeat left on node 1', first);
    assert.equal(answer.errorCode, ErrorCode.NOT_CONTROLLER);
    assert.equal(answer.isFenced, true);
    const second = channel.brokerHeartbeat(heartbeat);
    await within(10_000, 'the next heartbeat reaching node 2', (async () => { while (successor.requests() === 0) await new Promise((r) => setTimeout(r, 10)); })());
    channel.close();
    assert.equal((await second).errorCode, ErrorCode.NOT_CONTROLLER, 'closing the channel answers what is in flight');
  } finally {
    channel.close();
    old.close();
    successor.close();
  }
});

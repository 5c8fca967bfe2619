// Kafka's connection quotas: max.connections (the inter-broker listener protected), max.connections.per.ip
// and its overrides (addresses and host names), listener.name.<l>.max.connections, and all of them
// changed at run time through IncrementalAlterConfigs. Clients come from several loopback addresses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig, BrokerConfigError } from '../../src/config/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, encodeRequestFrame, FrameSplitter } from '../../src/protocol/index.js';
import { tempDataDir } from './process-helpers.js';

/** A connection from `from` to `port`: 'served' when it answers ApiVersions, 'refused' when the broker closes it. */
async function attempt(port: number, from: string, keep: Socket[]): Promise<'served' | 'refused'> {
  const sock = await new Promise<Socket>((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, localAddress: from }, () => resolve(s));
    s.on('error', reject);
  });
  return new Promise((resolve) => {
    const splitter = new FrameSplitter(1 << 20);
    sock.on('error', () => {});
    sock.on('close', () => resolve('refused'));
    sock.on('data', (d) => {
      if (splitter.push(d).length > 0) {
        sock.removeAllListeners('close');
        keep.push(sock);
        resolve('served');
      }
    });
    sock.write(Buffer.concat(encodeRequestFrame(ApiKey.ApiVersions, 0, 1, 'limits', {})));
  });
}

const portOf = (s: ServerHandle, name: string) => s.listeners.find((l) => l.name === name)!.port;

test('max.connections: the inter-broker listener may go past it, and the least recently active client connections are closed for it; per-address overrides and listener limits hold', async () => {
  const server = await startServer({
    bare: true,
    config: parseBrokerConfig({
      'node.id': '1',
      'listeners': 'PLAINTEXT://127.0.0.1:0,EXTERNAL://127.0.0.1:0,CLIENT://127.0.0.1:0',
      'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,EXTERNAL:PLAINTEXT,CLIENT:PLAINTEXT',
      'inter.broker.listener.name': 'PLAINTEXT',
      'max.connections': '3',
      'max.connections.per.ip': '100',
      'max.connections.per.ip.overrides': '127.0.0.2:1',
      'listener.name.external.max.connections': '2',
    }),
  });
  const open: Socket[] = [];
  const closedByBroker = async (s: Socket, what: string) => {
    const deadline = Date.now() + 10_000;
    while (!s.destroyed && s.readyState !== 'closed' && s.readableEnded !== true) {
      assert.ok(Date.now() < deadline, `${what} was not closed`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  try {
    const [plain, external, client] = ['PLAINTEXT', 'EXTERNAL', 'CLIENT'].map((n) => portOf(server, n)) as [number, number, number];
    // 127.0.0.2 may hold one connection (its override), wherever it goes.
    assert.equal(await attempt(external, '127.0.0.2', open), 'served');
    assert.equal(await attempt(client, '127.0.0.2', open), 'refused');
    // EXTERNAL holds two.
    assert.equal(await attempt(external, '127.0.0.1', open), 'served');
    assert.equal(await attempt(external, '127.0.0.1', open), 'refused');
    // The third connection fills max.connections: CLIENT is refused from then on.
    assert.equal(await attempt(client, '127.0.0.1', open), 'served');
    assert.equal(await attempt(client, '127.0.0.1', open), 'refused');
    const [ext2, ext1, client1] = open as [Socket, Socket, Socket];
    // The inter-broker listener is not refused: the least recently active client connection goes instead.
    assert.equal(await attempt(plain, '127.0.0.1', open), 'served');
    await closedByBroker(ext2, 'the least recently active connection');
    assert.equal(await attempt(plain, '127.0.0.1', open), 'served');
    await closedByBroker(ext1, 'the next least recently active connection');
    assert.equal(client1.destroyed || client1.readableEnded, false, 'the most recently active client connection stays');
    // The inter-broker listener's own limit is max.connections too (no listener.name.plaintext.max.connections).
    assert.equal(await attempt(plain, '127.0.0.1', open), 'served');
    await closedByBroker(client1, 'the last client connection');
    assert.equal(await attempt(plain, '127.0.0.1', open), 'refused');
    assert.equal(server.stats.connectionsRejected, 4);
  } finally {
    for (const s of open) s.destroy();
    await server.close();
  }
});

test('the limits as config: malformed overrides are refused, host names, IPv6 with and without brackets are taken', () => {
  const base = { 'node.id': '1', 'listeners': 'PLAINTEXT://127.0.0.1:0' };
  for (const overrides of ['localhost', '127.0.0.1:x', ':5', '127.0.0.1:-1']) {
    assert.throws(() => parseBrokerConfig({ ...base, 'max.connections.per.ip.overrides': overrides }), BrokerConfigError, overrides);
  }
  assert.doesNotThrow(() => parseBrokerConfig({ ...base, 'max.connections.per.ip': '0', 'max.connections.per.ip.overrides': 'localhost:10, ::1:3 ,[::2]:4' }));
});

test('IncrementalAlterConfigs changes the connection limits at run time: open connections stay, new ones meet the new limits, host names resolve', { timeout: 60_000 }, async () => {
  const logs: string[] = [];
  const log = (m: string) => { logs.push(m); };
  const server = await startServer({
    config: parseBrokerConfig({ 'node.id': '1', 'listeners': 'PLAINTEXT://127.0.0.1:0' }),
    dataDir: tempDataDir(),
    logger: { info: log, warn: log, error: log },
  });
  const port = server.listeners[0]!.port;
  let admin = new ClusterClient({ bootstrap: `127.0.0.1:${port}` });
  const open: Socket[] = [];
  const alter = async (resourceName: string, configs: { name: string; configOperation: number; value: string | null }[]) => {
    const conn = await admin.broker(1);
    const r = await conn.send(ApiKey.IncrementalAlterConfigs, 1, { resources: [{ resourceType: 4, resourceName, configs }], validateOnly: false });
    return r.responses[0] as { errorCode: number; errorMessage: string | null };
  };
  const applied = async (n: number) => {
    const deadline = Date.now() + 20_000;
    while (logs.filter((l) => l.includes('connection limits now')).length < n) {
      if (Date.now() > deadline) throw new Error(`connection limits change ${n} not applied: ${logs.slice(-5).join(' | ')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  try {
    for (let i = 0; i < 3; i++) assert.equal(await attempt(port, '127.0.0.3', open), 'served');
    // The cluster-wide default: two per address.
    let r = await alter('', [{ name: 'max.connections.per.ip', configOperation: 0, value: '2' }]);
    assert.equal(r.errorCode, 0, r.errorMessage ?? '');
    await applied(1);
    assert.equal(await attempt(port, '127.0.0.3', open), 'refused', 'a fourth from an address over the new limit');
    assert.equal(await attempt(port, '127.0.0.4', open), 'served');
    assert.equal(await attempt(port, '127.0.0.4', open), 'served');
    assert.equal(await attempt(port, '127.0.0.4', open), 'refused');
    assert.equal(open.filter((s) => !s.destroyed).length, 5, 'connections made before the change stay open');
    // This broker's own override by host name: localhost resolves to 127.0.0.1, which gets four.
    r = await alter('1', [{ name: 'max.connections.per.ip.overrides', configOperation: 0, value: 'localhost:4' }]);
    assert.equal(r.errorCode, 0, r.errorMessage ?? '');
    await applied(2);
    // The admin client's connections come from 127.0.0.1 too: it leaves while we count.
    admin.close();
    await new Promise((r) => setTimeout(r, 300));
    const fromLocalhost = [];
    for (let i = 0; i < 5; i++) fromLocalhost.push(await attempt(port, '127.0.0.1', open));
    assert.deepEqual(fromLocalhost, ['served', 'served', 'served', 'served', 'refused']);
    for (const s of open.splice(open.length - 4)) s.destroy();
    await new Promise((r) => setTimeout(r, 300));
    admin = new ClusterClient({ bootstrap: `127.0.0.1:${port}` });
    // A malformed value is refused and changes nothing; so is nobody from anywhere without exceptions
    // (Kafka's rule), which would also lock out the brokers' own connections.
    r = await alter('1', [{ name: 'max.connections.per.ip.overrides', configOperation: 0, value: 'localhost' }]);
    assert.notEqual(r.errorCode, 0);
    r = await alter('', [{ name: 'max.connections.per.ip', configOperation: 0, value: '0' }]);
    assert.equal(r.errorCode, 40, r.errorMessage ?? '');
    assert.match(r.errorMessage ?? '', /can be set to zero only if max.connections.per.ip.overrides is set/);
    // Both deleted: no limit again.
    r = await alter('1', [{ name: 'max.connections.per.ip.overrides', configOperation: 1, value: null }]);
    assert.equal(r.errorCode, 0, r.errorMessage ?? '');
    r = await alter('', [{ name: 'max.connections.per.ip', configOperation: 1, value: null }]);
    assert.equal(r.errorCode, 0, r.errorMessage ?? '');
    await applied(4);
    for (let i = 0; i < 3; i++) assert.equal(await attempt(port, '127.0.0.4', open), 'served');
  } finally {
    for (const s of open) s.destroy();
    admin.close();
    await server.close();
  }
});

test('max.connection.creation.rate makes connections over it wait their turn, none refused; the inter-broker listener does not wait', { timeout: 60_000 }, async () => {
  const server = await startServer({
    bare: true,
    config: parseBrokerConfig({
      'node.id': '1',
      'listeners': 'PLAINTEXT://127.0.0.1:0,CLIENT://127.0.0.1:0',
      'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CLIENT:PLAINTEXT',
      'inter.broker.listener.name': 'PLAINTEXT',
      'max.connection.creation.rate': '5',
    }),
  });
  const open: Socket[] = [];
  try {
    const started = Date.now();
    const servedAt: number[] = [];
    const clients = Array.from({ length: 15 }, async () => {
      const r = await attempt(portOf(server, 'CLIENT'), '127.0.0.1', open);
      servedAt.push(Date.now() - started);
      return r;
    });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(await attempt(portOf(server, 'PLAINTEXT'), '127.0.0.1', open), 'served');
    const interBrokerAt = Date.now() - started;
    assert.deepEqual(await Promise.all(clients), Array(15).fill('served'));
    // Five at once, then about five a second: the last of fifteen no sooner than ~1.5 s on.
    assert.ok(Math.max(...servedAt) >= 1500, `the last client connection was served after ${Math.max(...servedAt)} ms`);
    assert.ok(server.stats.connectionsDelayed >= 9, `${server.stats.connectionsDelayed} delayed`);
    assert.equal(server.stats.connectionsRejected, 0);
    assert.ok(interBrokerAt < Math.max(...servedAt), `the inter-broker connection (${interBrokerAt} ms) does not queue behind the clients`);
  } finally {
    for (const s of open) s.destroy();
    await server.close();
  }
});

test('a connection_creation_rate client quota on an address (and on the default address) closes its connections over the rate; other addresses are not held to it', { timeout: 60_000 }, async () => {
  const server = await startServer({ config: parseBrokerConfig({ 'node.id': '1', 'listeners': 'PLAINTEXT://127.0.0.1:0' }), dataDir: tempDataDir() });
  const port = server.listeners[0]!.port;
  const admin = new ClusterClient({ bootstrap: `127.0.0.1:${port}` });
  const open: Socket[] = [];
  const setQuota = async (entityName: string | null, value: number) => {
    const r = await admin.admin(ApiKey.AlterClientQuotas, { entries: [{ entity: [{ entityType: 'ip', entityName }], ops: [{ key: 'connection_creation_rate', value, remove: false }] }], validateOnly: false }, 1);
    assert.equal(r.entries[0].errorCode, 0, r.entries[0].errorMessage);
    // Until this broker's metadata has it.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const d = await admin.admin(ApiKey.DescribeClientQuotas, { components: [{ entityType: 'ip', matchType: entityName === null ? 1 : 0, match: entityName }], strict: false }, 1);
      if (d.entries?.some((e: { values: { key: string; value: number }[] }) => e.values.some((v) => v.value === value))) break;
      assert.ok(Date.now() < deadline, 'the quota reached the broker');
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 200));
  };
  const burst = async (from: string, n: number) => {
    const results = await Promise.all(Array.from({ length: n }, () => attempt(port, from, open)));
    return results.filter((r) => r === 'served').length;
  };
  try {
    // The quota names the address in full; clients come as 127.0.0.7 all the same.
    await setQuota('127.0.0.7', 3);
    const served = await burst('127.0.0.7', 20);
    // Three a second: the first three of a burst of twenty, a few more only if the burst took seconds.
    assert.ok(served >= 3 && served < 12, `${served} of 20 served`);
    assert.ok(server.stats.connectionsThrottled >= 8);
    assert.equal(await burst('127.0.0.8', 20), 20, 'an address without a quota');
    // The default address: every address without its own quota.
    await setQuota(null, 1);
    const fromDefault = await burst('127.0.0.9', 10);
    assert.ok(fromDefault >= 1 && fromDefault < 6, `${fromDefault} of 10 served under the default`);
  } finally {
    for (const s of open) s.destroy();
    admin.close();
    await server.close();
  }
});

test('socket.listen.backlog.size is the listen(2) backlog of every listener', async () => {
  const server = await startServer({
    bare: true,
    config: parseBrokerConfig({ 'node.id': '1', 'listeners': 'PLAINTEXT://127.0.0.1:0,CLIENT://127.0.0.1:0', 'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CLIENT:PLAINTEXT', 'socket.listen.backlog.size': '7' }),
  });
  try {
    for (const name of ['PLAINTEXT', 'CLIENT']) {
      // A listening socket's Send-Q in ss is its backlog.
      const out = execFileSync('ss', ['-ltnH', `sport = :${portOf(server, name)}`], { encoding: 'utf8' }).trim().split(/\s+/);
      assert.equal(out[2], '7', `ss: ${out.join(' ')}`);
    }
  } finally {
    await server.close();
  }
});

test('a broker closing while connections wait out max.connection.creation.rate stops at once and serves none of them', { timeout: 60_000 }, async () => {
  const server = await startServer({ bare: true, config: parseBrokerConfig({ 'node.id': '1', 'listeners': 'PLAINTEXT://127.0.0.1:0', 'max.connection.creation.rate': '1' }) });
  const open: Socket[] = [];
  const port = server.listeners[0]!.port;
  assert.equal(await attempt(port, '127.0.0.1', open), 'served');
  // The next ones wait a second or more each.
  const waiting = Array.from({ length: 4 }, () => attempt(port, '127.0.0.1', open));
  await new Promise((r) => setTimeout(r, 300));
  // Before, a connection held back this way kept the listener from closing at all (the test times out).
  await server.close();
  assert.deepEqual(await Promise.all(waiting), Array(4).fill('refused'), 'none is served once the broker stops');
  for (const s of open) s.destroy();
});

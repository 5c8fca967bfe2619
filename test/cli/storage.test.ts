// `logline storage` as an operator uses it before a cluster's first start (Kafka's kafka-storage.sh):
// random-uuid prints a cluster id, format stamps a log directory once (and refuses to again), info
// shows it; three `logline server` processes formatted with one id form one cluster, an unformatted
// node of a three-voter quorum refuses to start and says how to format, and the credentials given
// to --add-scram exist at the first start, on one node and on a cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clusterNodeArgs, clusterNodeProcesses, killProcess, runProcess, startServerProcess, startClusterNodeProcess, tempDataDir, until, type ClusterNodeProcess } from '../broker/process-helpers.js';
import { BrokerConnection, ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { freePort } from '../../src/util/index.js';

const logline = (...args: string[]) => runProcess(process.execPath, ['bin/logline.js', ...args]);
const storage = (...args: string[]) => logline('storage', ...args);

test('random-uuid prints a Kafka UUID: 22 base64url characters, 16 bytes, never starting with "-", new each time', async () => {
  const ids = new Set<string>();
  for (let i = 0; i < 5; i++) {
    const r = await storage('random-uuid');
    assert.equal(r.code, 0, r.stderr);
    const id = r.stdout.trim();
    assert.match(id, /^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
    assert.equal(Buffer.from(id, 'base64url').length, 16);
    ids.add(id);
  }
  assert.equal(ids.size, 5);
});

test('format writes meta.properties (version 1, node.id, cluster.id, directory.id) and info shows it; a second format is refused unless --ignore-formatted', async () => {
  const dir = join(tempDataDir(), 'node-4');
  const id = (await storage('random-uuid')).stdout.trim();
  const args = ['--cluster-id', id, '--node-id', '4', '--data-dir', dir];
  const formatted = await storage('format', ...args);
  assert.equal(formatted.code, 0, formatted.stderr);
  assert.equal(formatted.stdout.trim(), `Formatting metadata directory ${dir} with metadata.version 4.0-IV3.`);
  const meta = readFileSync(join(dir, 'meta.properties'), 'utf8');
  for (const line of ['version=1', 'node.id=4', `cluster.id=${id}`]) assert.ok(meta.split('\n').includes(line), meta);
  const directoryId = /^directory\.id=(\S{22})$/m.exec(meta)?.[1];
  assert.ok(directoryId !== undefined, meta);

  const info = await storage('info', '--node-id', '4', '--data-dir', dir);
  assert.equal(info.code, 0, info.stderr);
  assert.equal(info.stdout, `Found log directory:\n  ${dir}\n\nFound metadata: {cluster.id=${id}, directory.id=${directoryId}, node.id=4, version=1}\n`);
  const json = await storage('info', '--node-id', '4', '--data-dir', dir, '--json');
  assert.deepEqual(JSON.parse(json.stdout), { directories: [dir], metadata: { 'cluster.id': id, 'directory.id': directoryId, 'node.id': '4', version: '1' }, problems: [] });

  const again = await storage('format', ...args);
  assert.equal(again.code, 1);
  assert.equal(again.stderr.trim(), `Log directory ${dir} is already formatted. Use --ignore-formatted to ignore this directory and format the others.`);
  const ignored = await storage('format', ...args, '--ignore-formatted');
  assert.equal(ignored.code, 0, ignored.stderr);
  assert.equal(ignored.stdout.trim(), 'All of the log directories are already formatted.');
  assert.equal(readFileSync(join(dir, 'meta.properties'), 'utf8'), meta, 'left as it was');
  const otherCluster = await storage('format', '--cluster-id', (await storage('random-uuid')).stdout.trim(), '--node-id', '4', '--data-dir', dir, '--ignore-formatted');
  assert.equal(otherCluster.code, 1, 'another cluster\'s id is refused even with --ignore-formatted');
  assert.match(otherCluster.stderr, /Invalid cluster\.id in: .*meta\.properties\. Expected/);

  const missing = await storage('info', '--data-dir', join(dir, 'nowhere'));
  assert.equal(missing.code, 1);
  assert.match(missing.stdout, /Found problem:\n {2}.*nowhere does not exist/);
});

test('bad input is a usage error (exit code 2) with a clear message', async () => {
  const dir = tempDataDir();
  const id = (await storage('random-uuid')).stdout.trim();
  const dynamicController = ['--node-id', '1', '--data-dir', dir, '--listeners', 'CONTROLLER://127.0.0.1:19093', '--set', 'process.roles=controller',
    '--set', 'controller.listener.names=CONTROLLER', '--set', 'controller.quorum.bootstrap.servers=127.0.0.1:19093'];
  const broker = ['--node-id', '2', '--data-dir', dir, '--listeners', 'PLAINTEXT://127.0.0.1:19092', '--set', 'process.roles=broker',
    '--set', 'controller.listener.names=CONTROLLER', '--set', 'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT', '--set', 'controller.quorum.bootstrap.servers=127.0.0.1:19093'];
  const cases: [string[], RegExp][] = [
    [['format', '--data-dir', dir], /needs --cluster-id/],
    [['format', '--cluster-id', 'not-a-uuid', '--data-dir', dir], /not a Kafka UUID/],
    [['format', '--cluster-id', id, '--data-dir', dir, '--set', 'no.such.key=1'], /no\.such\.key/],
    [['format', '--cluster-id', id, '--config', join(dir, 'missing.properties')], /--config .*missing\.properties/],
    [['format', '--cluster-id', id, ...dynamicController], /you must specify one of the following: --standalone, --initial-controllers, or --no-initial-controllers/],
    [['format', '--cluster-id', id, ...dynamicController, '--standalone', '--no-initial-controllers'], /do not go together/],
    [['format', '--cluster-id', id, ...broker, '--standalone'], /You can only use --standalone on a controller/],
    [['format', '--cluster-id', id, ...dynamicController, '--initial-controllers', '1@127.0.0.1:19093:bad'], /not a directory id/],
    [['format', '--cluster-id', id, '--data-dir', dir, '--feature', 'no.such.feature=1'], /Unsupported feature: no\.such\.feature/],
    [['format', '--cluster-id', id, '--data-dir', dir, '--release-version', '2.8'], /--release-version 2\.8/],
    [['format', '--cluster-id', id, '--data-dir', dir, '--add-scram', 'SCRAM-SHA-1=[name=a,password=b]'], /unknown mechanism/],
    [['nonsense'], /unknown verb/],
  ];
  for (const [args, message] of cases) {
    const r = await storage(...args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
  }
  assert.equal(existsSync(join(dir, 'meta.properties')), false, 'nothing was formatted');
  assert.equal((await storage('--help')).code, 0);
});

/** The HTTP port a node logged ("http listening on http://127.0.0.1:PORT"). */
const httpPortOf = (n: ClusterNodeProcess) => Number(/http listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(n.log)![1]);

test('three formatted `logline server` nodes of one quorum become ready with one cluster id, and --add-scram\'s user exists at the first start', { timeout: 120_000 }, async () => {
  const { nodes, voters } = await clusterNodeProcesses(3, null);
  const id = (await storage('random-uuid')).stdout.trim();
  try {
    for (const n of nodes) {
      const r = await storage('format', '--cluster-id', id, ...clusterNodeArgs(n, voters), '--add-scram', 'SCRAM-SHA-256=[name=alice,password=alice-secret]');
      assert.equal(r.code, 0, r.stderr);
    }
    await Promise.all(nodes.map((n) => startClusterNodeProcess(n, voters)));
    for (const n of nodes) {
      assert.match(n.log, new RegExp(`\\(cluster ${id}, `), `node ${n.id} runs in the formatted cluster`);
      await until(30_000, `node ${n.id} ready`, async () => (await fetch(`http://127.0.0.1:${httpPortOf(n)}/v1/ready`)).status === 200 || undefined);
      const client = new ClusterClient({ bootstrap: `127.0.0.1:${n.brokerPort}` });
      try {
        await client.metadata([]);
        assert.equal(client.clusterId, id);
        assert.deepEqual([...client.brokers.keys()].sort(), [1, 2, 3]);
      } finally {
        client.close();
      }
    }
    const users = await until(30_000, 'alice listed', async () => {
      const r = await logline('user', 'scram', 'list', '-b', `127.0.0.1:${nodes[2]!.brokerPort}`, '--json');
      return r.code === 0 && JSON.parse(r.stdout).length > 0 ? JSON.parse(r.stdout) : undefined;
    });
    assert.deepEqual(users, [{ user: 'alice', mechanism: 'SCRAM-SHA-256', iterations: 4096 }]);
  } finally {
    await Promise.all(nodes.map((n) => n.child ? killProcess(n.child) : undefined));
  }
});

test('an unformatted node whose controller.quorum.voters names two others refuses to start, naming `logline storage format`; a node that is its only voter formats itself', { timeout: 60_000 }, async () => {
  const { nodes, voters } = await clusterNodeProcesses(3, null);
  const n = nodes[0]!;
  const refused = await runProcess(process.execPath, ['bin/logline.js', 'server', ...clusterNodeArgs(n, voters)], null, 30_000);
  assert.equal(refused.code, 1, refused.stdout + refused.stderr);
  assert.match(refused.stderr, /no meta\.properties in .* \(have you run `logline storage format` to format the directory\?\): controller\.quorum\.voters names other nodes \(2, 3\)/);
  assert.match(refused.stderr, /logline storage format --cluster-id ID/);
  assert.equal(existsSync(join(n.dir, 'meta.properties')), false, 'no cluster id made up');
  // A quorum of itself alone formats itself, as `npm start` does.
  const port = await freePort();
  const alone = await startServerProcess(tempDataDir(), ['--node-id', '1', '--listeners', `PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:${port}`,
    '--set', 'process.roles=broker,controller', '--set', 'controller.listener.names=CONTROLLER', '--set', 'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    '--set', `controller.quorum.voters=1@127.0.0.1:${port}`]);
  await killProcess(alone.child);
});

test('a dynamic quorum (controller.quorum.bootstrap.servers) formatted with --initial-controllers starts from those voters', { timeout: 120_000 }, async () => {
  const { nodes } = await clusterNodeProcesses(3, null);
  const ids = await Promise.all(nodes.map(async () => (await storage('random-uuid')).stdout.trim()));
  const initial = nodes.map((n, i) => `${n.id}@127.0.0.1:${n.controllerPort}:${ids[i]}`).join(',');
  const dynamic = [`controller.quorum.bootstrap.servers=${nodes.map((n) => `127.0.0.1:${n.controllerPort}`).join(',')}`];
  const id = (await storage('random-uuid')).stdout.trim();
  try {
    for (const [i, n] of nodes.entries()) {
      const r = await storage('format', '--cluster-id', id, ...clusterNodeArgs(n, '', dynamic), '--initial-controllers', initial);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), `Formatting dynamic metadata voter directory ${n.dir} with metadata.version 4.0-IV3.`);
      assert.match(readFileSync(join(n.dir, 'meta.properties'), 'utf8'), new RegExp(`^directory\\.id=${ids[i]}$`, 'm'), 'the directory id of --initial-controllers');
    }
    await Promise.all(nodes.map((n) => startClusterNodeProcess(n, '', dynamic)));
    const status = await until(30_000, 'every voter caught up', async () => {
      const r = await logline('cluster', 'status', '-b', `127.0.0.1:${nodes[0]!.brokerPort}`, '--json');
      const quorum = r.code === 0 ? JSON.parse(r.stdout).quorum : undefined;
      return quorum?.voters?.length === 3 ? quorum : undefined;
    });
    assert.deepEqual(status.voters.map((v: { id: number }) => v.id).sort(), [1, 2, 3]);
  } finally {
    await Promise.all(nodes.map((n) => n.child ? killProcess(n.child) : undefined));
  }
});

test('a single node formatted with --add-scram and --feature authenticates that user and finalizes that level at its first start', { timeout: 60_000 }, async () => {
  const dir = tempDataDir();
  const props = join(dir, 'server.properties');
  writeFileSync(props, [
    `log.dirs=${join(dir, 'data')}`, 'listeners=SASL_PLAINTEXT://127.0.0.1:0', 'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT',
    'sasl.enabled.mechanisms=SCRAM-SHA-256', 'http.listener=', 'schema.registry.listener=',
  ].join('\n'));
  const id = (await storage('random-uuid')).stdout.trim();
  const formatted = await storage('format', '--cluster-id', id, '--config', props, '--add-scram', 'SCRAM-SHA-256=[name=alice,password=alice-secret]', '--feature', 'transaction.version=1');
  assert.equal(formatted.code, 0, formatted.stderr);
  const child = spawn(process.execPath, ['bin/logline.js', 'server', '--config', props], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  try {
    const port = await until(20_000, `listening (${out})`, async () => Number(/listening on SASL_PLAINTEXT:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1]) || undefined);
    const login = (password: string) => BrokerConnection.open({ host: '127.0.0.1', port, sasl: { mechanism: 'SCRAM-SHA-256', username: 'alice', password } });
    const conn = await login('alice-secret');
    try {
      const versions = await conn.send(ApiKey.ApiVersions, 3, { clientSoftwareName: 'storage-test', clientSoftwareVersion: '1' });
      const levels = versions.finalizedFeatures.map((f: { name: string; maxVersionLevel: number }) => `${f.name}=${f.maxVersionLevel}`);
      assert.ok(levels.includes('transaction.version=1'), levels.join(','));
    } finally {
      conn.close();
    }
    await assert.rejects(login('wrong'));
    assert.match(out, new RegExp(`\\(cluster ${id}, `));
  } finally {
    await killProcess(child);
  }
});

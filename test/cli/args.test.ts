// The options every client command shares, as a user types them against a running broker:
// `-b host:port` (kcat's spelling) and LOGLINE_BOOTSTRAP_SERVERS choose the broker, an unknown option
// is refused with exit code 2 before anything connects, and each command's --help shows `-b`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { runProcess, tempDataDir } from '../broker/process-helpers.js';

const BIN = 'bin/logline.js';
// A port nothing listens on: a command that used it (or localhost:9092) would fail to connect.
const REFUSED = '127.0.0.1:1';

const cli = (args: string[], env: Record<string, string> = {}) => runProcess(process.execPath, [BIN, ...args], null, 30_000, { LOGLINE_BOOTSTRAP_SERVERS: '', ...env });
const topicNames = (stdout: string) => (JSON.parse(stdout) as { name: string }[]).map((t) => t.name);

test('-b, -bHOST and LOGLINE_BOOTSTRAP_SERVERS reach the broker; the flag wins over the environment', { timeout: 120_000 }, async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], config: parseBrokerConfig({ 'node.id': '1' }), dataDir: tempDataDir() });
  const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
  try {
    const created = await cli(['topic', 'create', 'short-b', '-b', bootstrap, '--partitions', '3', '--json']);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(JSON.parse(created.stdout).partitions, 3);

    const joined = await cli(['topic', 'list', `-b${bootstrap}`, '--json']);
    assert.equal(joined.code, 0, joined.stderr);
    assert.deepEqual(topicNames(joined.stdout), ['short-b']);

    const fromEnv = await cli(['topic', 'list', '--json'], { LOGLINE_BOOTSTRAP_SERVERS: bootstrap });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    assert.deepEqual(topicNames(fromEnv.stdout), ['short-b'], 'the environment names the broker when -b is absent');

    const flagWins = await cli(['topic', 'describe', 'short-b', '-b', bootstrap, '--json'], { LOGLINE_BOOTSTRAP_SERVERS: REFUSED });
    assert.equal(flagWins.code, 0, flagWins.stderr);
    const envOnly = await cli(['topic', 'list', '--json'], { LOGLINE_BOOTSTRAP_SERVERS: REFUSED });
    assert.equal(envOnly.code, 1);
    assert.match(envOnly.stderr, /127\.0\.0\.1:1/, 'the environment\'s broker is the one tried');
  } finally {
    await server.close();
  }
});

test('an unknown short or long option exits 2 naming it, instead of becoming a positional', async () => {
  for (const [args, named] of [
    [['topic', 'list', '-x', 'somewhere:9092'], /unknown option -x\b/],
    [['topic', 'list', '--nope'], /unknown option --nope\b/],
    [['consume', '--topic', 't', '-x'], /unknown option -x\b/],
    [['group', 'list', '--nope=1'], /unknown option --nope\b/],
    [['topic', 'list', '-b'], /-b needs a value/],
  ] as const) {
    const r = await cli([...args], { LOGLINE_BOOTSTRAP_SERVERS: REFUSED });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, named);
    assert.doesNotMatch(r.stderr, /ECONNREFUSED|connect/, 'refused before connecting anywhere');
  }
});

test('every client command\'s --help shows -b, --bootstrap-server', async () => {
  for (const command of ['topic', 'produce', 'consume', 'group', 'transactions', 'cluster', 'bench', 'doctor']) {
    const r = await cli([command, '--help']);
    assert.equal(r.code, 0, `${command}: ${r.stderr}`);
    assert.match(r.stdout, /^\s+-b, --bootstrap-server X\s+.*LOGLINE_BOOTSTRAP_SERVERS/m, command);
  }
});

// `logline quota set|list` as a user runs it: set quotas for a user, a user's default client id and
// the default client id, list them (all, one entity, strictly), delete a key, and the broker's
// refusal of a key that is no quota (exit 1 with Kafka's message) and usage errors (exit 2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../../src/node/index.js';
import { runProcess, tempDataDir } from '../broker/process-helpers.js';

const BIN = 'bin/logline.js';

test('quota set, list and delete through the admin APIs', { timeout: 60_000 }, async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
  const cli = async (...args: string[]) => {
    const r = await runProcess(process.execPath, [BIN, 'quota', ...args, '--bootstrap-server', bootstrap], null, 30_000);
    return { code: r.code, out: r.stdout, err: r.stderr };
  };
  try {
    let r = await cli('set', '--user', 'alice', '--add', 'producer_byte_rate=1048576,consumer_byte_rate=2097152');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /updated: user alice: producer_byte_rate=1048576, consumer_byte_rate=2097152/);
    assert.equal((await cli('set', '--user', 'alice', '--client-default', '--add', 'request_percentage=25')).code, 0);
    assert.equal((await cli('set', '--client-default', '--add', 'consumer_byte_rate=1000')).code, 0);
    assert.equal((await cli('set', '--user-default', '--add', 'controller_mutation_rate=5', '--validate-only')).code, 0);

    r = await cli('list', '--json');
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(JSON.parse(r.out), [
      { user: 'alice', clientId: null, ip: null, quotas: 'consumer_byte_rate=2097152,producer_byte_rate=1048576' },
      { user: 'alice', clientId: '<default>', ip: null, quotas: 'request_percentage=25' },
      { user: null, clientId: '<default>', ip: null, quotas: 'consumer_byte_rate=1000' },
    ].sort((a, b) => `${a.user}\0${a.clientId}\0${a.ip}`.localeCompare(`${b.user}\0${b.clientId}\0${b.ip}`)), 'the validate-only default user quota is not there');
    r = await cli('list', '--user', 'alice', '--strict');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /USER\s+CLIENTID\s+IP\s+QUOTAS/);
    assert.match(r.out, /alice\s+-\s+-\s+consumer_byte_rate=2097152,producer_byte_rate=1048576/);
    assert.doesNotMatch(r.out, /request_percentage/);

    assert.equal((await cli('set', '--user', 'alice', '--delete', 'consumer_byte_rate')).code, 0);
    assert.match((await cli('list', '--user', 'alice', '--strict')).out, /alice\s+-\s+-\s+producer_byte_rate=1048576\n?$/m);

    r = await cli('set', '--user', 'alice', '--add', 'bytes_per_fortnight=1');
    assert.equal(r.code, 1);
    assert.match(r.err, /Invalid configuration key bytes_per_fortnight/);
    assert.equal((await cli('set', '--add', 'producer_byte_rate=1')).code, 2, 'no entity');
    assert.equal((await cli('set', '--user', 'a', '--user-default', '--add', 'producer_byte_rate=1')).code, 2, 'two users');
    assert.equal((await cli('set', '--user', 'a', '--add', 'producer_byte_rate=fast')).code, 2, 'not a number');
  } finally {
    await server.close();
  }
});

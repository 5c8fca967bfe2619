// `logline server --add-scram` writes credentials only into a new data directory: a restart with
// other --add-scram values logs that they were ignored and keeps the first ones. `logline user
// scram set|list|delete` manage users through --command-config (SASL with Kafka's client properties).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { runProcess, tempDataDir } from '../broker/process-helpers.js';
import { startServer } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { BrokerConnection } from '../../src/client/index.js';
import { parseAddScram, scramCredentialRecord } from '../../src/security/index.js';

const config = () => parseBrokerConfig({
  'node.id': '1', 'listeners': 'SASL_PLAINTEXT://127.0.0.1:0', 'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT',
  'sasl.enabled.mechanisms': 'SCRAM-SHA-512,SCRAM-SHA-256',
});
const login = (port: number, mechanism: string, username: string, password: string) =>
  BrokerConnection.open({ host: '127.0.0.1', port, sasl: { mechanism, username, password } }).then((c) => { c.close(); return true; }, () => false);

test('--add-scram applies at the first start only; the CLI sets, lists and deletes users over SASL', { timeout: 60_000 }, async () => {
  const dataDir = tempDataDir();
  const logs: string[] = [];
  const logger = { info: (m: string) => logs.push(m), warn: (m: string) => logs.push(m), error: (m: string) => logs.push(m) };
  let server = await startServer({ config: config(), dataDir, logger, bootstrapRecords: [scramCredentialRecord(parseAddScram('SCRAM-SHA-512=[name=admin,password=first]'))] });
  await server.close();
  server = await startServer({ config: config(), dataDir, logger, bootstrapRecords: [scramCredentialRecord(parseAddScram('SCRAM-SHA-512=[name=admin,password=second]'))] });
  try {
    const port = server.listeners[0]!.port;
    assert.ok(logs.some((l) => l.includes('(--add-scram) ignored: the metadata log already exists')), logs.join('\n'));
    assert.equal(await login(port, 'SCRAM-SHA-512', 'admin', 'first'), true);
    assert.equal(await login(port, 'SCRAM-SHA-512', 'admin', 'second'), false);
    const props = join(mkdtempSync(join(tmpdir(), 'logline-cmdcfg-')), 'admin.properties');
    writeFileSync(props, 'security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n'
      + 'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="first";\n');
    const cli = (...args: string[]) => runProcess(process.execPath, ['bin/logline.js', 'user', 'scram', ...args, '-b', `127.0.0.1:${port}`, '--command-config', props]);
    const set = await cli('set', '--name', 'bob', '--password', 'bob-pw', '--mechanism', 'SCRAM-SHA-256', '--iterations', '8192');
    assert.equal(set.code, 0, set.stderr);
    assert.equal(await login(port, 'SCRAM-SHA-256', 'bob', 'bob-pw'), true);
    const list = await cli('list', '--json');
    assert.deepEqual(JSON.parse(list.stdout), [
      { user: 'admin', mechanism: 'SCRAM-SHA-512', iterations: 4096 }, { user: 'bob', mechanism: 'SCRAM-SHA-256', iterations: 8192 },
    ]);
    const tooFew = await cli('set', '--name', 'carol', '--password', 'x', '--iterations', '100');
    assert.equal(tooFew.code, 2, tooFew.stderr);
    assert.equal((await cli('delete', '--name', 'bob', '--mechanism', 'SCRAM-SHA-256')).code, 0);
    assert.equal(await login(port, 'SCRAM-SHA-256', 'bob', 'bob-pw'), false);
    const missing = await cli('delete', '--name', 'bob', '--mechanism', 'SCRAM-SHA-256');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /RESOURCE_NOT_FOUND/);
  } finally {
    await server.close();
  }
});

// `logline feature` as an operator runs it (kafka-features.sh's verbs): describe the features with
// their finalized levels, turn eligible leader replicas (KIP-966) off with a safe downgrade and back
// on with an upgrade, a dry run that changes nothing, the controller's refusal of a level this
// software does not support (exit 1), and usage errors (exit 2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../../src/node/index.js';
import { runProcess, tempDataDir } from '../broker/process-helpers.js';

const BIN = 'bin/logline.js';
const ELR = 'eligible.leader.replicas.version';

test('feature describe, downgrade, upgrade and disable through ApiVersions and UpdateFeatures', { timeout: 60_000 }, async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
  const cli = async (...args: string[]) => {
    const r = await runProcess(process.execPath, [BIN, 'feature', ...args, '--bootstrap-server', bootstrap], null, 30_000);
    return { code: r.code, out: r.stdout, err: r.stderr };
  };
  const levelOf = async (feature: string): Promise<number> => {
    const r = await cli('describe', '--json');
    assert.equal(r.code, 0, r.err);
    const row = (JSON.parse(r.out) as { feature: string; finalizedVersionLevel: number }[]).find((f) => f.feature === feature);
    assert.ok(row, `${feature} is described`);
    return row.finalizedVersionLevel;
  };
  try {
    let r = await cli('describe');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /FEATURE\s+SUPPORTEDMINVERSION\s+SUPPORTEDMAXVERSION\s+FINALIZEDVERSIONLEVEL\s+EPOCH/);
    assert.match(r.out, /eligible\.leader\.replicas\.version\s+0\s+1\s+1\s+\d+/, 'on in a new cluster, as in Kafka 4.1');
    assert.match(r.out, /transaction\.version/);

    r = await cli('downgrade', '--feature', `${ELR}=0`, '--dry-run');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /valid, not applied: eligible\.leader\.replicas\.version downgraded to 0/);
    assert.equal(await levelOf(ELR), 1, 'a dry run changes nothing');

    r = await cli('downgrade', '--feature', `${ELR}=0`);
    assert.equal(r.code, 0, r.err);
    assert.equal(await levelOf(ELR), 0);
    r = await cli('upgrade', '--feature', `${ELR}=1`);
    assert.equal(r.code, 0, r.err);
    assert.equal(await levelOf(ELR), 1);
    r = await cli('disable', '--feature', ELR);
    assert.equal(r.code, 0, r.err);
    assert.equal(await levelOf(ELR), 0);

    r = await cli('upgrade', '--feature', `${ELR}=99`);
    assert.equal(r.code, 1, 'a level this software does not support is refused');
    assert.match(r.err, /INVALID_UPDATE_VERSION|eligible\.leader\.replicas\.version/);
    assert.equal(await levelOf(ELR), 0);

    assert.equal((await cli('upgrade')).code, 2, 'no --feature');
    assert.equal((await cli('upgrade', '--feature', `${ELR}=high`)).code, 2, 'not a level');
    assert.equal((await cli('upgrade', '--feature', `${ELR}=1`, '--unsafe')).code, 2, '--unsafe on an upgrade');
    assert.equal((await cli('disable', '--feature', `${ELR}=0`)).code, 2, 'disable takes names');
    assert.equal((await cli('promote', '--feature', `${ELR}=1`)).code, 2, 'unknown verb');
  } finally {
    await server.close();
  }
});

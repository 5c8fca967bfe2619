// UpdateFeatures (key 57) on a one-node server: eligible.leader.replicas.version (KIP-966) turned
// down to 0 and up again, as `kafka-features.sh downgrade/upgrade` sends it; a downgrade asked as an
// upgrade, a level out of range and a feature this software cannot change are refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerConnection } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { tempDataDir } from './process-helpers.js';
import { withTxnBroker } from './txn-broker.js';

const ELR = 'eligible.leader.replicas.version';

const update = (c: BrokerConnection, feature: string, maxVersionLevel: number, upgradeType: number, validateOnly = false) =>
  c.send<{ errorCode: number; errorMessage: string | null; results: { feature: string; errorCode: number }[] }>(ApiKey.UpdateFeatures, 1, {
    timeoutMs: 10_000, validateOnly, featureUpdates: [{ feature, maxVersionLevel, allowDowngrade: false, upgradeType }],
  });

const finalized = async (c: BrokerConnection): Promise<Map<string, number>> => {
  const r = await c.send<{ finalizedFeatures: { name: string; maxVersionLevel: number }[] }>(ApiKey.ApiVersions, 4, { clientSoftwareName: 'update-features', clientSoftwareVersion: '1' });
  return new Map(r.finalizedFeatures.map((f) => [f.name, f.maxVersionLevel]));
};

test('UpdateFeatures turns eligible.leader.replicas.version down (a safe downgrade) and up again; refusals change nothing', { timeout: 120_000 }, async () => {
  await withTxnBroker('update-features', tempDataDir(), async (c) => {
    assert.equal((await finalized(c)).get(ELR), 1, 'a new cluster finalizes level 1 (Kafka 4.1)');
    const asUpgrade = await update(c, ELR, 0, 1);
    assert.equal(asUpgrade.errorCode, ErrorCode.INVALID_UPDATE_VERSION);
    assert.match(asUpgrade.errorMessage ?? '', /downgrade/);
    assert.equal((await update(c, ELR, 2, 1)).errorCode, ErrorCode.INVALID_UPDATE_VERSION, 'level 2 does not exist');
    assert.equal((await update(c, 'metadata.version', 25, 1)).errorCode, ErrorCode.INVALID_UPDATE_VERSION);
    assert.equal((await update(c, ELR, 0, 2, true)).errorCode, ErrorCode.NONE, 'validate only');
    assert.equal((await finalized(c)).get(ELR), 1, 'refusals and validate-only change nothing');
    const down = await update(c, ELR, 0, 2);
    assert.deepEqual([down.errorCode, down.results.map((r) => [r.feature, r.errorCode])], [ErrorCode.NONE, [[ELR, ErrorCode.NONE]]]);
    assert.equal((await finalized(c)).has(ELR), false, 'level 0 is not finalized');
    assert.equal((await update(c, ELR, 1, 1)).errorCode, ErrorCode.NONE);
    assert.equal((await finalized(c)).get(ELR), 1);
  });
});

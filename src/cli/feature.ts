// `logline feature describe|upgrade|downgrade|disable`, in kafka-features' vocabulary: describe
// lists every feature this software supports with the cluster's finalized level (ApiVersions v4, as
// Kafka's Admin.describeFeatures asks a broker); the others change finalized levels (UpdateFeatures
// v1, all or none), e.g. `logline feature downgrade --feature eligible.leader.replicas.version=0`.
// A downgrade is a safe one unless --unsafe; --dry-run validates without changing anything.
import { ClusterClient, KafkaError } from '../client/index.js';
import { ApiKey } from '../protocol/index.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { COMMON_FLAGS, clientOptions, table, toJson } from './output.js';

const FLAGS: Record<string, FlagSpec> = {
  ...COMMON_FLAGS,
  feature: { type: 'string', repeatable: true, help: 'upgrade/downgrade: name=level[,name=level...]; disable: name[,name...]' },
  unsafe: { type: 'boolean', help: 'downgrade/disable: an unsafe downgrade (metadata may be lost)' },
  'dry-run': { type: 'boolean', help: 'validate the change without making it' },
};

const USAGE = 'logline feature <describe|upgrade|downgrade|disable> [--feature name=level,...] [--unsafe] [--dry-run] [options]';

/** UpdateFeatures' upgradeType values. */
const UPGRADE_TYPE = { upgrade: 1, safeDowngrade: 2, unsafeDowngrade: 3 } as const;

/** `a=1,b=0` (repeatable) → levels; for `disable` (`withLevel` false) bare names, at level 0. */
function parseFeatures(items: string[], withLevel: boolean): { feature: string; level: number }[] {
  const out: { feature: string; level: number }[] = [];
  for (const item of items.flatMap((s) => s.split(',')).map((s) => s.trim()).filter((s) => s !== '')) {
    if (!withLevel) {
      if (item.includes('=')) throw new UsageError(`--feature ${item}: disable takes a name only`);
      out.push({ feature: item, level: 0 });
      continue;
    }
    const eq = item.indexOf('=');
    const level = Number(item.slice(eq + 1));
    if (eq <= 0 || !/^\d+$/.test(item.slice(eq + 1).trim()) || level > 0x7fff) throw new UsageError(`--feature ${item}: expected name=level (a level from 0 to 32767)`);
    out.push({ feature: item.slice(0, eq).trim(), level });
  }
  if (new Set(out.map((f) => f.feature)).size !== out.length) throw new UsageError('--feature names a feature twice');
  return out;
}

export async function featureCommand(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, FLAGS);
  const [verb, ...extra] = positionals;
  if (flags.help || !verb) {
    console.log(helpText(USAGE, 'Describe the cluster\'s features and change their finalized levels.', FLAGS));
    return verb || flags.help ? 0 : 2;
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument ${extra[0]}`);
  const client = new ClusterClient(clientOptions(flags));
  try {
    if (verb === 'describe') {
      const r = await client.admin(ApiKey.ApiVersions, { clientSoftwareName: 'logline', clientSoftwareVersion: '0.1.0' }, 4);
      if (r.errorCode !== 0) throw new KafkaError(r.errorCode, null);
      const finalized = new Map((r.finalizedFeatures as { name: string; maxVersionLevel: number }[]).map((f) => [f.name, f.maxVersionLevel]));
      const rows = (r.supportedFeatures as { name: string; minVersion: number; maxVersion: number }[]).map((f) => ({
        feature: f.name, supportedMinVersion: f.minVersion, supportedMaxVersion: f.maxVersion,
        // Not finalized: level 0, as kafka-features shows it.
        finalizedVersionLevel: finalized.get(f.name) ?? 0, epoch: Number(r.finalizedFeaturesEpoch),
      })).sort((a, b) => a.feature.localeCompare(b.feature));
      console.log(flags.json ? toJson(rows) : table(rows, ['feature', 'supportedMinVersion', 'supportedMaxVersion', 'finalizedVersionLevel', 'epoch']));
      return 0;
    }
    if (verb !== 'upgrade' && verb !== 'downgrade' && verb !== 'disable') throw new UsageError(`unknown feature command "${verb}" (describe, upgrade, downgrade, disable)`);
    const features = parseFeatures((flags.feature as string[] | undefined) ?? [], verb !== 'disable');
    if (features.length === 0) throw new UsageError(`feature ${verb} needs --feature ${verb === 'disable' ? 'name' : 'name=level'}`);
    if (verb === 'upgrade' && flags.unsafe) throw new UsageError('--unsafe is for a downgrade');
    const upgradeType = verb === 'upgrade' ? UPGRADE_TYPE.upgrade : flags.unsafe ? UPGRADE_TYPE.unsafeDowngrade : UPGRADE_TYPE.safeDowngrade;
    const dryRun = flags['dry-run'] === true;
    const r = await client.admin(ApiKey.UpdateFeatures, {
      timeoutMs: 30_000, validateOnly: dryRun,
      featureUpdates: features.map((f) => ({ feature: f.feature, maxVersionLevel: f.level, allowDowngrade: upgradeType !== UPGRADE_TYPE.upgrade, upgradeType })),
    }, 1);
    const failed = (r.results as { feature: string; errorCode: number; errorMessage: string | null }[]).filter((x) => x.errorCode !== 0);
    if (r.errorCode !== 0) throw new KafkaError(r.errorCode, r.errorMessage);
    if (failed.length > 0) throw new KafkaError(failed[0]!.errorCode, `${failed[0]!.feature}: ${failed[0]!.errorMessage ?? 'refused'}`);
    const done = features.map((f) => `${f.feature} ${verb === 'upgrade' ? 'upgraded' : 'downgraded'} to ${f.level}`);
    console.log(flags.json ? toJson({ features, upgradeType, dryRun }) : `${dryRun ? 'valid, not applied' : 'done'}: ${done.join(', ')}`);
    return 0;
  } finally {
    client.close();
  }
}

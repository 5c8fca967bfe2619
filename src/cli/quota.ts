// `logline quota set|list`, in kafka-configs' vocabulary: an entity is --user NAME or
// --user-default, and/or --client-id ID or --client-default (or --ip ADDRESS / --ip-default);
// `set` adds or changes quotas with --add key=value,... and removes them with --delete key,...
// (AlterClientQuotas); `list` shows the quotas of the entities the flags name, every quota without
// any (DescribeClientQuotas; --strict: only entities of exactly those types).
import { ClusterClient, KafkaError } from '../client/index.js';
import { ApiKey } from '../protocol/index.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { COMMON_FLAGS, clientOptions, table, toJson } from './output.js';

const FLAGS: Record<string, FlagSpec> = {
  ...COMMON_FLAGS,
  user: { type: 'string', help: 'the user (principal name, e.g. alice for User:alice)' },
  'user-default': { type: 'boolean', help: 'the default user (every user without a quota of its own)' },
  'client-id': { type: 'string', help: 'the client id' },
  'client-default': { type: 'boolean', help: 'the default client id' },
  ip: { type: 'string', help: 'an IP address (connection_creation_rate only)' },
  'ip-default': { type: 'boolean', help: 'the default IP address' },
  add: { type: 'string', repeatable: true, help: 'set: key=value[,key=value...] (producer_byte_rate, consumer_byte_rate, request_percentage, controller_mutation_rate; connection_creation_rate for an ip)' },
  delete: { type: 'string', repeatable: true, help: 'set: key[,key...] to remove' },
  strict: { type: 'boolean', help: 'list: only entities of exactly the named types' },
  'validate-only': { type: 'boolean', help: 'set: check the change without making it' },
};

const USAGE = 'logline quota <set|list> [--user NAME|--user-default] [--client-id ID|--client-default] [--add k=v,...] [--delete k,...] [options]';

interface EntityPart { entityType: string; entityName: string | null }

/** The entity the flags name (types in a fixed order), or a UsageError for a name and a default of one type. */
function entityOf(flags: Record<string, unknown>): EntityPart[] {
  const parts: EntityPart[] = [];
  for (const [type, nameFlag, defaultFlag] of [['user', 'user', 'user-default'], ['client-id', 'client-id', 'client-default'], ['ip', 'ip', 'ip-default']] as const) {
    const name = flags[nameFlag];
    if (typeof name === 'string' && flags[defaultFlag]) throw new UsageError(`--${nameFlag} and --${defaultFlag} name two entities; give one`);
    if (typeof name === 'string') parts.push({ entityType: type, entityName: name });
    else if (flags[defaultFlag]) parts.push({ entityType: type, entityName: null });
  }
  return parts;
}

/** `a=1,b=2.5` (repeatable) → ops; a value must be a number. */
function parseOps(add: string[], del: string[]): { key: string; value: number; remove: boolean }[] {
  const ops = [];
  for (const item of add.flatMap((s) => s.split(',')).map((s) => s.trim()).filter((s) => s !== '')) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new UsageError(`--add ${item}: expected key=value`);
    const value = Number(item.slice(eq + 1));
    if (item.slice(eq + 1).trim() === '' || !Number.isFinite(value)) throw new UsageError(`--add ${item}: "${item.slice(eq + 1)}" is not a number`);
    ops.push({ key: item.slice(0, eq).trim(), value, remove: false });
  }
  for (const key of del.flatMap((s) => s.split(',')).map((s) => s.trim()).filter((s) => s !== '')) ops.push({ key, value: 0, remove: true });
  return ops;
}

const shown = (parts: EntityPart[], type: string): string | null => {
  const p = parts.find((x) => x.entityType === type);
  return p === undefined ? null : p.entityName ?? '<default>';
};

export async function quotaCommand(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, FLAGS);
  const [verb, ...extra] = positionals;
  if (flags.help || !verb) {
    console.log(helpText(USAGE, 'Set and list client quotas (per user and/or client id, with defaults).', FLAGS));
    return verb || flags.help ? 0 : 2;
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument ${extra[0]}`);
  const entity = entityOf(flags);
  const client = new ClusterClient(clientOptions(flags));
  try {
    switch (verb) {
      case 'set': {
        if (entity.length === 0) throw new UsageError('quota set needs an entity: --user NAME|--user-default and/or --client-id ID|--client-default (or --ip)');
        const ops = parseOps((flags.add as string[] | undefined) ?? [], (flags.delete as string[] | undefined) ?? []);
        if (ops.length === 0) throw new UsageError('quota set needs --add key=value or --delete key');
        const r = await client.admin(ApiKey.AlterClientQuotas, { entries: [{ entity, ops }], validateOnly: flags['validate-only'] === true }, 1);
        const e = r.entries[0];
        if (e.errorCode !== 0) throw new KafkaError(e.errorCode, e.errorMessage);
        const what = entity.map((p) => `${p.entityType} ${p.entityName ?? '<default>'}`).join(', ');
        console.log(flags.json ? toJson({ entity, ops, validateOnly: flags['validate-only'] === true })
          : `${flags['validate-only'] ? 'valid, not applied' : 'updated'}: ${what}: ${ops.map((o) => o.remove ? `-${o.key}` : `${o.key}=${o.value}`).join(', ')}`);
        return 0;
      }
      case 'list': {
        const components = entity.map((p) => ({ entityType: p.entityType, matchType: p.entityName === null ? 1 : 0, match: p.entityName }));
        const r = await client.admin(ApiKey.DescribeClientQuotas, { components, strict: flags.strict === true }, 1);
        if (r.errorCode !== 0) throw new KafkaError(r.errorCode, r.errorMessage);
        const rows = (r.entries as { entity: EntityPart[]; values: { key: string; value: number }[] }[]).map((e) => ({
          user: shown(e.entity, 'user'), clientId: shown(e.entity, 'client-id'), ip: shown(e.entity, 'ip'),
          quotas: e.values.map((v) => `${v.key}=${v.value}`).sort().join(','),
        })).sort((a, b) => `${a.user}\0${a.clientId}\0${a.ip}`.localeCompare(`${b.user}\0${b.clientId}\0${b.ip}`));
        console.log(flags.json ? toJson(rows) : table(rows, ['user', 'clientId', 'ip', 'quotas']));
        return 0;
      }
      default:
        throw new UsageError(`unknown quota command "${verb}" (set, list)`);
    }
  } finally {
    client.close();
  }
}

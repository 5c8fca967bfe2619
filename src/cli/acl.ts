// `logline acl create|list|delete`, with kafka-acls.sh's vocabulary: --allow-principal,
// --deny-principal, --allow-host, --deny-host, --operation, --topic, --group, --cluster,
// --transactional-id, --resource-pattern-type. Create makes every combination of principals,
// operations and resources (as kafka-acls.sh does); list and delete take the same options as a
// filter, where what is not given matches everything.
import { ClusterClient, KafkaError } from '../client/index.js';
import { ApiKey, ErrorCode, errorName } from '../protocol/index.js';
import { AclOperation, AclPermissionType, CLUSTER_RESOURCE_NAME, PatternType, ResourceType } from '../metadata/index.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { COMMON_FLAGS, clientOptions, table, toJson } from './output.js';

const FLAGS: Record<string, FlagSpec> = {
  ...COMMON_FLAGS,
  'allow-principal': { type: 'string', repeatable: true, help: 'principal granted (User:alice, User:* for everyone)' },
  'deny-principal': { type: 'string', repeatable: true, help: 'principal refused' },
  'allow-host': { type: 'string', repeatable: true, help: 'host the allow ACLs apply from (default *)' },
  'deny-host': { type: 'string', repeatable: true, help: 'host the deny ACLs apply from (default *)' },
  operation: { type: 'string', repeatable: true, help: 'Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, All' },
  topic: { type: 'string', repeatable: true, help: 'topic name (* for all topics)' },
  group: { type: 'string', repeatable: true, help: 'consumer group id (* for all groups)' },
  cluster: { type: 'boolean', help: 'the cluster resource' },
  'transactional-id': { type: 'string', repeatable: true, help: 'transactional id (* for all)' },
  'resource-pattern-type': { type: 'string', help: 'literal (default) or prefixed; list/delete also take any and match' },
  principal: { type: 'string', help: 'list/delete: only ACLs of this principal' },
  force: { type: 'boolean', help: 'delete: also when no resource is named (deletes every matching ACL)' },
};

const USAGE = 'logline acl <create|list|delete> [options]';

const OPERATIONS: Record<string, number> = {
  all: AclOperation.ALL, read: AclOperation.READ, write: AclOperation.WRITE, create: AclOperation.CREATE, delete: AclOperation.DELETE,
  alter: AclOperation.ALTER, describe: AclOperation.DESCRIBE, clusteraction: AclOperation.CLUSTER_ACTION, describeconfigs: AclOperation.DESCRIBE_CONFIGS,
  alterconfigs: AclOperation.ALTER_CONFIGS, idempotentwrite: AclOperation.IDEMPOTENT_WRITE, createtokens: AclOperation.CREATE_TOKENS, describetokens: AclOperation.DESCRIBE_TOKENS,
};
const nameOf = (table: Record<string, number>, code: number) => Object.entries(table).find(([, v]) => v === code)?.[0] ?? String(code);
const RESOURCE_NAMES: Record<string, number> = { Topic: ResourceType.TOPIC, Group: ResourceType.GROUP, Cluster: ResourceType.CLUSTER, TransactionalId: ResourceType.TRANSACTIONAL_ID, DelegationToken: ResourceType.DELEGATION_TOKEN, User: ResourceType.USER };
const PATTERN_NAMES: Record<string, number> = { LITERAL: PatternType.LITERAL, PREFIXED: PatternType.PREFIXED, ANY: PatternType.ANY, MATCH: PatternType.MATCH };
const OPERATION_NAMES: Record<string, number> = {
  All: AclOperation.ALL, Read: AclOperation.READ, Write: AclOperation.WRITE, Create: AclOperation.CREATE, Delete: AclOperation.DELETE, Alter: AclOperation.ALTER,
  Describe: AclOperation.DESCRIBE, ClusterAction: AclOperation.CLUSTER_ACTION, DescribeConfigs: AclOperation.DESCRIBE_CONFIGS, AlterConfigs: AclOperation.ALTER_CONFIGS,
  IdempotentWrite: AclOperation.IDEMPOTENT_WRITE, CreateTokens: AclOperation.CREATE_TOKENS, DescribeTokens: AclOperation.DESCRIBE_TOKENS,
};

const list = (v: unknown): string[] => (v as string[] | undefined) ?? [];

function resources(flags: Record<string, unknown>): { resourceType: number; resourceName: string }[] {
  return [
    ...list(flags.topic).map((n) => ({ resourceType: ResourceType.TOPIC, resourceName: n })),
    ...list(flags.group).map((n) => ({ resourceType: ResourceType.GROUP, resourceName: n })),
    ...list(flags['transactional-id']).map((n) => ({ resourceType: ResourceType.TRANSACTIONAL_ID, resourceName: n })),
    ...(flags.cluster === true ? [{ resourceType: ResourceType.CLUSTER, resourceName: CLUSTER_RESOURCE_NAME }] : []),
  ];
}

function operations(flags: Record<string, unknown>, fallback: number): number[] {
  const ops = list(flags.operation);
  if (ops.length === 0) return [fallback];
  return ops.map((o) => {
    const code = OPERATIONS[o.toLowerCase().replace(/[-_]/g, '')];
    if (code === undefined) throw new UsageError(`unknown --operation ${o}`);
    return code;
  });
}

function patternType(flags: Record<string, unknown>, fallback: number, filter: boolean): number {
  const v = flags['resource-pattern-type'] as string | undefined;
  if (v === undefined) return fallback;
  const code = PATTERN_NAMES[v.toUpperCase()];
  if (code === undefined || (!filter && code !== PatternType.LITERAL && code !== PatternType.PREFIXED)) throw new UsageError(`--resource-pattern-type ${v}: literal or prefixed${filter ? ', any or match' : ''}`);
  return code;
}

/** Principals and hosts with their permission: --allow-principal with --allow-host, --deny-principal with --deny-host. */
function grants(flags: Record<string, unknown>): { principal: string; host: string; permissionType: number }[] {
  const out = [];
  for (const [p, h, permissionType] of [['allow-principal', 'allow-host', AclPermissionType.ALLOW], ['deny-principal', 'deny-host', AclPermissionType.DENY]] as const) {
    const hosts = list(flags[h]).length > 0 ? list(flags[h]) : ['*'];
    for (const principal of list(flags[p])) for (const host of hosts) out.push({ principal, host, permissionType });
  }
  return out;
}

/** The list/delete filters: one per named resource (or one matching any), per principal given (or any). */
function filters(flags: Record<string, unknown>) {
  const res = resources(flags);
  const pattern = patternType(flags, res.length === 0 ? PatternType.ANY : PatternType.LITERAL, true);
  const principals = [...list(flags['allow-principal']), ...list(flags['deny-principal']), ...(flags.principal ? [flags.principal as string] : [])];
  const permission = list(flags['allow-principal']).length > 0 && list(flags['deny-principal']).length === 0 ? AclPermissionType.ALLOW
    : list(flags['deny-principal']).length > 0 && list(flags['allow-principal']).length === 0 ? AclPermissionType.DENY : AclPermissionType.ANY;
  const out = [];
  for (const r of res.length > 0 ? res : [{ resourceType: ResourceType.ANY, resourceName: null }]) {
    for (const principal of principals.length > 0 ? principals : [null]) {
      for (const operation of operations(flags, AclOperation.ANY)) {
        out.push({ resourceTypeFilter: r.resourceType, resourceNameFilter: r.resourceName, patternTypeFilter: pattern, principalFilter: principal,
          hostFilter: null, operation, permissionType: permission });
      }
    }
  }
  return out;
}

const row = (r: { resourceType: number; resourceName: string; patternType: number }, a: { principal: string; host: string; operation: number; permissionType: number }) => ({
  resourceType: nameOf(RESOURCE_NAMES, r.resourceType), name: r.resourceName, patternType: nameOf(PATTERN_NAMES, r.patternType),
  principal: a.principal, host: a.host, operation: nameOf(OPERATION_NAMES, a.operation), permission: a.permissionType === AclPermissionType.ALLOW ? 'ALLOW' : 'DENY',
});

export async function aclCommand(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, FLAGS);
  const [verb] = positionals;
  if (flags.help || !verb) {
    console.log(helpText(USAGE, 'Manage ACLs (needs authorizer.class.name on the brokers).', FLAGS));
    return verb || flags.help ? 0 : 2;
  }
  const client = new ClusterClient(clientOptions(flags));
  const json = flags.json === true;
  try {
    switch (verb) {
      case 'create': {
        const res = resources(flags);
        const who = grants(flags);
        if (res.length === 0) throw new UsageError('acl create needs a resource: --topic, --group, --cluster or --transactional-id');
        if (who.length === 0) throw new UsageError('acl create needs --allow-principal or --deny-principal');
        const pattern = patternType(flags, PatternType.LITERAL, false);
        const creations = res.flatMap((r) => who.flatMap((w) => operations(flags, AclOperation.ALL).map((operation) => ({
          resourceType: r.resourceType, resourceName: r.resourceName, resourcePatternType: pattern, ...w, operation,
        }))));
        const out = await client.admin<{ results: { errorCode: number; errorMessage: string | null }[] }>(ApiKey.CreateAcls, { creations });
        const failed = out.results.map((x, i) => ({ ...x, i })).filter((x) => x.errorCode !== ErrorCode.NONE);
        const rows = creations.map((c, i) => ({ ...row({ resourceType: c.resourceType, resourceName: c.resourceName, patternType: c.resourcePatternType }, c),
          result: out.results[i]?.errorCode === 0 ? 'created' : `${errorName(out.results[i]?.errorCode ?? -1)}${out.results[i]?.errorMessage ? `: ${out.results[i]!.errorMessage}` : ''}` }));
        console.log(json ? toJson(rows) : table(rows));
        return failed.length === 0 ? 0 : 1;
      }
      case 'list': {
        const rows = [];
        for (const f of filters(flags)) {
          const out = await client.admin(ApiKey.DescribeAcls, f);
          if (out.errorCode !== ErrorCode.NONE) throw new KafkaError(out.errorCode, out.errorMessage);
          for (const r of out.resources) for (const a of r.acls) rows.push(row(r, a));
        }
        console.log(json ? toJson(rows) : table(rows));
        return 0;
      }
      case 'delete': {
        if (resources(flags).length === 0 && flags.force !== true) throw new UsageError('acl delete without --topic/--group/--cluster/--transactional-id deletes every matching ACL: add --force');
        const out = await client.admin(ApiKey.DeleteAcls, { filters: filters(flags) });
        const rows = [];
        let failed = false;
        for (const f of out.filterResults) {
          if (f.errorCode !== ErrorCode.NONE) { failed = true; console.error(`${errorName(f.errorCode)}${f.errorMessage ? `: ${f.errorMessage}` : ''}`); }
          for (const a of f.matchingAcls) rows.push(row(a, a));
        }
        console.log(json ? toJson(rows) : table(rows));
        return failed ? 1 : 0;
      }
      default:
        throw new UsageError(`unknown verb ${verb}; ${USAGE}`);
    }
  } finally {
    client.close();
  }
}

// The authorizer against a naive oracle written from Kafka's documented rules (fast-check), the
// ACL filters of DescribeAcls/DeleteAcls, the controller's ACL records, and the per-API table's
// coverage of every handler the broker has.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { readdirSync } from 'node:fs';
import { AclIndex, AclOperation, AclPermissionType, PatternType, ResourceType, filterMatches, parseSuperUsers, authorizerFromConfig } from '../../src/security/index.js';
import { AclsDelta, AclsImage, MetadataDelta, MetadataImage, provenance, type StandardAcl } from '../../src/metadata/index.js';
import { createAcls, deleteAcls } from '../../src/controller/index.js';
import { AUTHORIZATION_RULES, CONTROLLER_LISTENER_RULES } from '../../src/broker/authorization.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { Prng } from '../../src/util/index.js';

const imageOf = (acls: StandardAcl[]): AclsImage => new AclsImage(new Map(acls.map((a) => [a.id, a])));
const noSettings = { superUsers: new Set<string>(), allowEveryoneIfNoAclFound: false };

/** The rules as Kafka documents them, with no index and no cache: every ACL is looked at. */
function oracle(acls: StandardAcl[], superUsers: Set<string>, allowEveryone: boolean, principal: string, host: string, op: number, type: number, name: string): boolean {
  if (superUsers.has(principal)) return true;
  const onResource = acls.filter((a) => a.resourceType === type && (
    (a.patternType === PatternType.LITERAL && (a.resourceName === name || a.resourceName === '*'))
    || (a.patternType === PatternType.PREFIXED && name.startsWith(a.resourceName))));
  const mine = onResource.filter((a) => (a.principal === principal || a.principal === 'User:*') && (a.host === host || a.host === '*'));
  if (mine.some((a) => a.permissionType === AclPermissionType.DENY && (a.operation === op || a.operation === AclOperation.ALL))) return false;
  const implies = (aclOp: number) => aclOp === op || aclOp === AclOperation.ALL
    || (op === AclOperation.DESCRIBE && [AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER].includes(aclOp as 3))
    || (op === AclOperation.DESCRIBE_CONFIGS && aclOp === AclOperation.ALTER_CONFIGS);
  if (mine.some((a) => a.permissionType === AclPermissionType.ALLOW && implies(a.operation))) return true;
  return onResource.length === 0 && allowEveryone;
}

const names = ['a', 'ab', 'abc', 'b', 'ba', '*'];
const principals = ['User:alice', 'User:bob', 'User:*'];
const hosts = ['127.0.0.1', '10.0.0.1', '*'];
const ops = [AclOperation.ALL, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER, AclOperation.DESCRIBE,
  AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS, AclOperation.CREATE];
const types = [ResourceType.TOPIC, ResourceType.GROUP];

const aclArb = fc.record({
  resourceType: fc.constantFrom(...types),
  resourceName: fc.constantFrom(...names),
  patternType: fc.constantFrom(PatternType.LITERAL, PatternType.PREFIXED),
  principal: fc.constantFrom(...principals),
  host: fc.constantFrom(...hosts),
  operation: fc.constantFrom(...ops),
  permissionType: fc.constantFrom(AclPermissionType.ALLOW, AclPermissionType.DENY),
}).filter((a) => !(a.patternType === PatternType.PREFIXED && a.resourceName === '*'));
const aclsArb = fc.array(aclArb, { maxLength: 25 }).map((list) => list.map((a, i) => ({ ...a, id: `acl${i}` })));
const actionArb = fc.record({
  principal: fc.constantFrom('User:alice', 'User:bob', 'User:carol'),
  host: fc.constantFrom('127.0.0.1', '10.0.0.1'),
  operation: fc.constantFrom(...ops.filter((o) => o !== AclOperation.ALL)),
  resourceType: fc.constantFrom(...types),
  resourceName: fc.constantFrom('a', 'ab', 'abc', 'abd', 'b', 'ba', 'c', '*'),
});

test('the indexed, cached authorizer decides as the naive oracle: literal, wildcard, prefix, principal and host wildcards, implications, DENY wins', () => {
  fc.assert(fc.property(aclsArb, fc.array(actionArb, { minLength: 1, maxLength: 20 }), fc.boolean(), fc.boolean(), (acls, actions, allowEveryone, aliceSuper) => {
    const superUsers = aliceSuper ? parseSuperUsers('User:alice; User:CN=x,O=y') : new Set<string>();
    const index = new AclIndex(imageOf(acls), { superUsers, allowEveryoneIfNoAclFound: allowEveryone });
    // Twice: the second round answers from the decision cache.
    for (let round = 0; round < 2; round++) {
      for (const a of actions) {
        assert.equal(index.authorize(a.principal, a.host, a.operation, a.resourceType, a.resourceName),
          oracle(acls, superUsers, allowEveryone, a.principal, a.host, a.operation, a.resourceType, a.resourceName), JSON.stringify({ a, acls }));
      }
    }
  }), { numRuns: 400 });
});

test('a matching DENY wins over every ALLOW, whatever else is granted', () => {
  fc.assert(fc.property(aclsArb, actionArb, (acls, a) => {
    const deny = { id: 'deny', resourceType: a.resourceType, resourceName: a.resourceName, patternType: PatternType.LITERAL, principal: a.principal,
      host: '*', operation: a.operation, permissionType: AclPermissionType.DENY };
    const allowAll = { ...deny, id: 'allow', operation: AclOperation.ALL, permissionType: AclPermissionType.ALLOW, principal: 'User:*' };
    const index = new AclIndex(imageOf([...acls, deny, allowAll]), noSettings);
    assert.equal(index.authorize(a.principal, a.host, a.operation, a.resourceType, a.resourceName), false);
  }), { numRuns: 200 });
});

test('implications: READ/WRITE/DELETE/ALTER allow DESCRIBE, ALTER_CONFIGS allows DESCRIBE_CONFIGS, and nothing the other way', () => {
  const acl = (operation: number): StandardAcl => ({ id: 'x', resourceType: ResourceType.TOPIC, resourceName: 't', patternType: PatternType.LITERAL,
    principal: 'User:alice', host: '*', operation, permissionType: AclPermissionType.ALLOW });
  const can = (granted: number, asked: number) => new AclIndex(imageOf([acl(granted)]), noSettings).authorize('User:alice', '1.2.3.4', asked, ResourceType.TOPIC, 't');
  for (const g of [AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER]) assert.equal(can(g, AclOperation.DESCRIBE), true);
  assert.equal(can(AclOperation.ALTER_CONFIGS, AclOperation.DESCRIBE_CONFIGS), true);
  assert.equal(can(AclOperation.DESCRIBE, AclOperation.READ), false);
  assert.equal(can(AclOperation.CREATE, AclOperation.DESCRIBE), false);
  assert.equal(can(AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS), false);
  assert.equal(can(AclOperation.ALL, AclOperation.IDEMPOTENT_WRITE), true);
});

test('WRITE on any topic (idempotent producers): allowed by a literal or prefixed grant, refused by a wildcard DENY or a DENY covering the grant', () => {
  const acl = (name: string, patternType: number, permissionType: number): StandardAcl => ({ id: `${name}${patternType}${permissionType}`, resourceType: ResourceType.TOPIC,
    resourceName: name, patternType, principal: 'User:alice', host: '*', operation: AclOperation.WRITE, permissionType });
  const any = (acls: StandardAcl[]) => new AclIndex(imageOf(acls), noSettings).authorizeAny('User:alice', 'h', AclOperation.WRITE, ResourceType.TOPIC);
  assert.equal(any([]), false);
  assert.equal(any([acl('orders', PatternType.LITERAL, AclPermissionType.ALLOW)]), true);
  assert.equal(any([acl('ord', PatternType.PREFIXED, AclPermissionType.ALLOW)]), true);
  assert.equal(any([acl('orders', PatternType.LITERAL, AclPermissionType.ALLOW), acl('*', PatternType.LITERAL, AclPermissionType.DENY)]), false);
  assert.equal(any([acl('orders', PatternType.LITERAL, AclPermissionType.ALLOW), acl('ord', PatternType.PREFIXED, AclPermissionType.DENY)]), false);
  assert.equal(any([acl('orders', PatternType.LITERAL, AclPermissionType.ALLOW), acl('orders', PatternType.LITERAL, AclPermissionType.DENY)]), false);
  assert.equal(any([acl('orders', PatternType.LITERAL, AclPermissionType.ALLOW), acl('other', PatternType.LITERAL, AclPermissionType.DENY)]), true);
});

test('authorizer.class.name: the two Kafka names turn it on, empty leaves it off, anything else is refused', () => {
  assert.equal(authorizerFromConfig('', null, false, AclsImage.EMPTY), null);
  assert.notEqual(authorizerFromConfig('org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'User:a;User:b', false, AclsImage.EMPTY), null);
  assert.notEqual(authorizerFromConfig('kafka.security.authorizer.AclAuthorizer', null, false, AclsImage.EMPTY), null);
  assert.throws(() => authorizerFromConfig('com.example.Custom', null, false, AclsImage.EMPTY));
  assert.deepEqual([...parseSuperUsers(' User:CN=broker,O=acme ;User:admin;')], ['User:CN=broker,O=acme', 'User:admin']);
});

test('filters: null fields and ANY match everything; MATCH finds the literal, wildcard and prefixed ACLs that apply to a name', () => {
  const acl = (resourceName: string, patternType: number): StandardAcl => ({ id: resourceName + patternType, resourceType: ResourceType.TOPIC, resourceName, patternType,
    principal: 'User:alice', host: '*', operation: AclOperation.READ, permissionType: AclPermissionType.ALLOW });
  const acls = [acl('orders', PatternType.LITERAL), acl('*', PatternType.LITERAL), acl('ord', PatternType.PREFIXED), acl('other', PatternType.PREFIXED), acl('ord', PatternType.LITERAL)];
  const f = (resourceName: string | null, patternType: number) => acls.filter((a) => filterMatches({ resourceType: ResourceType.TOPIC, resourceName, patternType,
    principal: null, host: null, operation: AclOperation.ANY, permissionType: AclPermissionType.ANY }, a)).map((a) => a.id);
  assert.deepEqual(f('orders', PatternType.MATCH), ['orders3', '*3', 'ord4']);
  assert.deepEqual(f('ord', PatternType.ANY), ['ord4', 'ord3']);
  assert.deepEqual(f('ord', PatternType.LITERAL), ['ord3']);
  assert.deepEqual(f(null, PatternType.PREFIXED), ['ord4', 'other4']);
  assert.equal(f(null, PatternType.ANY).length, 5);
});

const creation = (over: Partial<Record<string, unknown>> = {}) => ({ resourceType: ResourceType.TOPIC, resourceName: 'orders', resourcePatternType: PatternType.LITERAL,
  principal: 'User:alice', host: '*', operation: AclOperation.READ, permissionType: AclPermissionType.ALLOW, ...over }) as any;

test('the controller: bad bindings answer INVALID_REQUEST per creation, duplicates write nothing, delete removes each match once and replays', () => {
  const prng = new Prng(7);
  const made = createAcls(MetadataImage.EMPTY, [creation(), creation(), creation({ resourcePatternType: PatternType.MATCH }), creation({ principal: 'alice' }),
    creation({ resourceType: ResourceType.CLUSTER, resourceName: 'x' }), creation({ operation: AclOperation.ANY }), creation({ resourceName: '' })], prng);
  assert.deepEqual(made.response.map((r) => r.errorCode), [0, 0, ...Array(5).fill(ErrorCode.INVALID_REQUEST)]);
  assert.equal(made.records.length, 1);
  const delta = new MetadataDelta(MetadataImage.EMPTY);
  for (const r of made.records) delta.replay(r);
  const image = delta.apply(provenance(0, 1));
  assert.equal(image.acls.acls.size, 1);
  assert.equal(createAcls(image, [creation()], prng).records.length, 0);
  const anyFilter = { resourceTypeFilter: ResourceType.ANY, resourceNameFilter: null, patternTypeFilter: PatternType.ANY, principalFilter: null, hostFilter: null,
    operation: AclOperation.ANY, permissionType: AclPermissionType.ANY };
  const gone = deleteAcls(image, [anyFilter, { ...anyFilter, principalFilter: 'User:alice' }, { ...anyFilter, patternTypeFilter: 0 }]);
  assert.deepEqual(gone.response.map((r) => [r.errorCode, r.matchingAcls.length]), [[0, 1], [0, 1], [ErrorCode.INVALID_REQUEST, 0]]);
  assert.equal(gone.records.length, 1);
  const d2 = new AclsDelta(image.acls);
  d2.replayRemove((gone.records[0] as any).data);
  assert.equal(d2.apply().acls.size, 0);
});

test('every API there is a handler for has an authorization rule (Envelope, served on the controller listener only, in that listener\'s table)', () => {
  const keys = readdirSync('src/broker/handlers').map((f) => Number(f.slice(0, 2))).filter((k) => Number.isInteger(k));
  const controllerOnly = new Set<number>([ApiKey.Envelope]);
  const missing = keys.filter((k) => !(controllerOnly.has(k) ? CONTROLLER_LISTENER_RULES : AUTHORIZATION_RULES).has(k));
  assert.deepEqual(missing, []);
  // The quorum's own APIs on the controller listener have rules there too.
  for (const k of [ApiKey.Vote, ApiKey.BeginQuorumEpoch, ApiKey.EndQuorumEpoch, ApiKey.Fetch, ApiKey.FetchSnapshot, ApiKey.DescribeQuorum, ApiKey.AddRaftVoter, ApiKey.RemoveRaftVoter]) {
    assert.ok(CONTROLLER_LISTENER_RULES.has(k) && CONTROLLER_LISTENER_RULES.get(k) !== AUTHORIZATION_RULES.get(k), `API ${k}`);
  }
});

test('with 10,000 literal and prefixed ACLs the index finds the grant of each principal and no other', () => {
  const acls: StandardAcl[] = [];
  for (let i = 0; i < 10_000; i++) {
    acls.push({ id: `a${i}`, resourceType: ResourceType.TOPIC, resourceName: i % 2 === 0 ? `topic-${i}` : `pre-${i}-`, patternType: i % 2 === 0 ? PatternType.LITERAL : PatternType.PREFIXED,
      principal: `User:u${i % 100}`, host: '*', operation: AclOperation.WRITE, permissionType: AclPermissionType.ALLOW });
  }
  const index = new AclIndex(imageOf(acls), noSettings);
  assert.equal(index.decide('User:u0', 'h', AclOperation.WRITE, ResourceType.TOPIC, 'topic-0'), true);
  assert.equal(index.decide('User:u1', 'h', AclOperation.WRITE, ResourceType.TOPIC, 'pre-1-x'), true);
  assert.equal(index.decide('User:u2', 'h', AclOperation.WRITE, ResourceType.TOPIC, 'pre-1-x'), false);
  assert.equal(index.decide('User:u0', 'h', AclOperation.READ, ResourceType.TOPIC, 'topic-0'), false);
});

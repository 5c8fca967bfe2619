// sync.topic.acls: the source's literal topic ACLs appear on the target for the remote topics, the
// way MirrorMaker 2 maps them (ALLOW WRITE left out, ALLOW ALL made READ, DENY kept), and only for
// topics the flow mirrors. Both clusters run the StandardAuthorizer; the tests' client is a super user.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiKey } from '../../src/protocol/index.js';
import { AclOperation, AclPermissionType, PatternType, ResourceType } from '../../src/security/index.js';
import { parseMirrorConfig, targetTopicAcls, type TopicAcl } from '../../src/mirror/index.js';
import { parseProperties } from '../../src/config/index.js';
import type { ClusterClient } from '../../src/client/index.js';
import { createTopic, eventually, startMirror, twoClusters } from './helpers.js';

const { ALLOW, DENY } = AclPermissionType;
const { READ, WRITE, ALL, DESCRIBE } = AclOperation;

function flowOf(extra: string) {
  const config = parseMirrorConfig(parseProperties(`clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\nA->B.enabled = true\n${extra}`));
  return config.flows[0]!;
}

test('targetTopicAcls maps ACLs as MirrorSourceConnector does', () => {
  const acl = (topic: string, principal: string, operation: number, permissionType: number): TopicAcl => ({ topic, principal, host: '*', operation, permissionType });
  const source = [
    acl('orders', 'User:alice', READ, ALLOW),
    acl('orders', 'User:alice', WRITE, ALLOW),
    acl('orders', 'User:bob', ALL, ALLOW),
    acl('orders', 'User:eve', ALL, DENY),
    acl('orders', 'User:eve', WRITE, DENY),
    acl('secret', 'User:alice', READ, ALLOW),
    acl('B.orders', 'User:alice', READ, ALLOW),
  ];
  const out = targetTopicAcls(flowOf('A->B.topics = orders|B\\\\..*'), source);
  assert.deepEqual(out, [
    acl('A.orders', 'User:alice', READ, ALLOW),
    acl('A.orders', 'User:bob', READ, ALLOW),
    acl('A.orders', 'User:eve', ALL, DENY),
    acl('A.orders', 'User:eve', WRITE, DENY),
  ], 'WRITE allowed is not copied, ALL allowed becomes READ, DENY kept; secret is not mirrored; B.orders would be a cycle');
  const identity = targetTopicAcls(flowOf('A->B.topics = orders\nreplication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy'), source);
  assert.deepEqual(identity.map((a) => a.topic), ['orders', 'orders', 'orders', 'orders']);
});

async function topicAcls(client: ClusterClient): Promise<string[]> {
  const r = await client.admin(ApiKey.DescribeAcls, {
    resourceTypeFilter: ResourceType.TOPIC, resourceNameFilter: null, patternTypeFilter: PatternType.ANY,
    principalFilter: null, hostFilter: null, operation: AclOperation.ANY, permissionType: AclPermissionType.ANY,
  });
  assert.equal(r.errorCode, 0);
  const out: string[] = [];
  for (const res of r.resources) for (const a of res.acls) out.push(`${res.resourceName}/${res.patternType}/${a.principal}/${a.operation}/${a.permissionType}`);
  return out.sort();
}

test('A->B with authorizers: topic ACLs on A appear on B for A.orders within the sync interval, mapped; nothing else is created', { timeout: 90_000 }, async () => {
  const c = await twoClusters({ 'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'super.users': 'User:ANONYMOUS' });
  const engine = await startMirror(c, { 'A->B.topics': 'orders', 'sync.topic.acls.interval.seconds': '1' });
  try {
    await createTopic(c, 'a', 'orders', 1);
    await createTopic(c, 'a', 'other', 1);
    const creation = (name: string, patternType: number, principal: string, operation: number, permissionType: number) => ({
      resourceType: ResourceType.TOPIC, resourceName: name, resourcePatternType: patternType, principal, host: '*', operation, permissionType,
    });
    const r = await c.aClient.admin(ApiKey.CreateAcls, { creations: [
      creation('orders', PatternType.LITERAL, 'User:alice', READ, ALLOW),
      creation('orders', PatternType.LITERAL, 'User:alice', WRITE, ALLOW),
      creation('orders', PatternType.LITERAL, 'User:bob', ALL, ALLOW),
      creation('orders', PatternType.LITERAL, 'User:eve', DESCRIBE, DENY),
      creation('ord', PatternType.PREFIXED, 'User:carol', READ, ALLOW),
      creation('other', PatternType.LITERAL, 'User:alice', READ, ALLOW),
    ] });
    assert.ok(r.results.every((x: { errorCode: number }) => x.errorCode === 0), JSON.stringify(r.results));
    const lit = PatternType.LITERAL;
    const expected = [
      `A.orders/${lit}/User:alice/${READ}/${ALLOW}`,
      `A.orders/${lit}/User:bob/${READ}/${ALLOW}`,
      `A.orders/${lit}/User:eve/${DESCRIBE}/${DENY}`,
    ].sort();
    await eventually('the ACLs of orders on B for A.orders', 30_000, async () => (await topicAcls(c.bClient)).length >= expected.length);
    // Several more sync rounds: nothing is added twice and nothing else appears.
    await new Promise((res) => setTimeout(res, 2500));
    assert.deepEqual(await topicAcls(c.bClient), expected);
  } finally {
    await engine.stop();
    await c.close();
  }
});

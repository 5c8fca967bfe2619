// The mirror and ACLs. sync.topic.acls: the source's literal topic ACLs appear on the target for the remote topics, the
// way MirrorMaker 2 maps them (ALLOW WRITE left out, ALLOW ALL made READ, DENY kept), and only for
// topics the flow mirrors. Both clusters run the StandardAuthorizer; the tests' client is a super user.
// And a target that refuses the mirror's writes for a while (a DENY ACL): the mirror resumes from
// where its writes stopped, skipping nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiKey } from '../../src/protocol/index.js';
import { AclOperation, AclPermissionType, PatternType, ResourceType } from '../../src/security/index.js';
import { parseMirrorConfig, targetTopicAcls, type TopicAcl } from '../../src/mirror/index.js';
import { parseProperties } from '../../src/config/index.js';
import type { ClusterClient } from '../../src/client/index.js';
import { createTopic, eventually, kafkajsWrites, readAll, startMirror, twoClusters } from './helpers.js';

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

test('writes refused by the target for a while (a DENY WRITE on the remote topic) are retried from where they stopped: nothing skipped once allowed again', { timeout: 120_000 }, async () => {
  const c = await twoClusters({ 'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'allow.everyone.if.no.acl.found': 'true' });
  const engine = await startMirror(c, { 'A->B.topics': 'events', 'sync.topic.acls.enabled': 'false' });
  const deny = { resourceType: ResourceType.TOPIC, resourceName: 'A.events', resourcePatternType: PatternType.LITERAL, principal: 'User:ANONYMOUS', host: '*', operation: WRITE, permissionType: DENY };
  try {
    await createTopic(c, 'a', 'events', 2);
    const writing = kafkajsWrites(c.aBootstrap, 'events', 6000, 'js');
    await eventually('the mirror to start copying', 30_000, async () => ((await readAll(c.bBootstrap, 'A.events', 2).catch(() => null))?.get(0)?.length ?? 0) > 0);
    const created = await c.bClient.admin(ApiKey.CreateAcls, { creations: [deny] });
    assert.equal(created.results[0].errorCode, 0);
    await eventually('the mirror to report a refused write', 30_000, () => (engine.metrics.status(Date.now()).flows.find((f) => f.source === 'A')?.lastError ?? '').includes('AUTHORIZATION'));
    const refusedAt = engine.metrics.status(Date.now()).flows.find((f) => f.source === 'A')!.lastErrorAtMs!;
    await new Promise((r) => setTimeout(r, 1500));
    const deleted = await c.bClient.admin(ApiKey.DeleteAcls, { filters: [{
      resourceTypeFilter: deny.resourceType, resourceNameFilter: deny.resourceName, patternTypeFilter: deny.resourcePatternType,
      principalFilter: deny.principal, hostFilter: deny.host, operation: deny.operation, permissionType: deny.permissionType,
    }] });
    assert.equal(deleted.filterResults[0].errorCode, 0);
    const sent = await writing;
    const source = await readAll(c.aBootstrap, 'events', 2);
    assert.equal([...source.values()].reduce((n, r) => n + r.length, 0), sent.length);
    await eventually('B to hold every record of A', 60_000, async () => {
      const t = await readAll(c.bBootstrap, 'A.events', 2).catch(() => null);
      return t !== null && [0, 1].every((p) => new Set(t.get(p)!.map((x) => x.value!.toString())).size >= source.get(p)!.length);
    });
    const target = await readAll(c.bBootstrap, 'A.events', 2);
    for (const p of [0, 1]) {
      const values = target.get(p)!.map((x) => x.value!.toString());
      let at = 0;
      for (const rec of source.get(p)!) {
        const found = values.indexOf(rec.value!.toString(), at);
        assert.ok(found >= 0, `A events-${p}@${rec.offset} is on B after position ${at}`);
        at = found + 1;
      }
    }
    console.log(`# ${sent.length} records; writes to B refused from ${new Date(refusedAt).toISOString()} for ~1.5 s; all on B in order afterwards`);
  } finally {
    await engine.stop();
    await c.close();
  }
});

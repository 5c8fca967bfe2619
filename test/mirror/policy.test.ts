// Replication policies and the cycle guard (MirrorSourceConnector.isCycle's behaviour).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isCycle, isInternalTopic, originalTopic, policyFromConfig, shouldReplicateTopic, parseMirrorConfig } from '../../src/mirror/index.js';

const def = policyFromConfig('DefaultReplicationPolicy', '.', true);
const identity = policyFromConfig('IdentityReplicationPolicy', '.', true);

test('DefaultReplicationPolicy: A.orders came from A, one hop up is orders, the original is orders', () => {
  assert.equal(def.topicSource('A.orders'), 'A');
  assert.equal(def.upstreamTopic('B.A.orders'), 'A.orders');
  assert.equal(originalTopic(def, 'B.A.orders'), 'orders');
  assert.equal(def.topicSource('orders'), null);
  assert.equal(def.checkpointsTopic('A'), 'A.checkpoints.internal');
  assert.equal(def.offsetSyncsTopic('B'), 'mm2-offset-syncs.B.internal');
  assert.ok(isInternalTopic(def, 'mm2-offsets.A.internal') && isInternalTopic(def, '__consumer_offsets') && !isInternalTopic(def, 'orders'));
});

test('the cycle guard: a topic that came from the target, directly or through others, is not mirrored back', () => {
  assert.ok(isCycle(def, 'A', 'A.orders'), 'A.orders on B does not go back to A');
  assert.ok(isCycle(def, 'A', 'C.A.orders'), 'nor through C');
  assert.ok(!isCycle(def, 'C', 'A.orders'), 'A.orders may go on to C');
  assert.ok(!isCycle(def, 'A', 'orders'));
  // IdentityReplicationPolicy cannot tell a mirrored topic from a local one (as in MirrorMaker 2).
  assert.ok(!isCycle(identity, 'A', 'orders'));
  assert.ok(isCycle(identity, 'A', 'A.heartbeats'));
});

test('B->A does not mirror A.orders back, but mirrors B\'s own topics and heartbeats', () => {
  const c = parseMirrorConfig(new Map([['clusters', 'A, B'], ['A.bootstrap.servers', 'a:1'], ['B.bootstrap.servers', 'b:1'], ['topics', 'orders|A\\.orders|B\\.orders']]));
  const ba = c.flows.find((f) => f.source === 'B')!;
  assert.ok(!shouldReplicateTopic(ba, 'A.orders'));
  assert.ok(shouldReplicateTopic(ba, 'orders'));
  assert.ok(shouldReplicateTopic(ba, 'heartbeats'), 'heartbeats go whatever the topic filter says');
  assert.ok(!shouldReplicateTopic(ba, 'A.heartbeats'));
  assert.ok(!shouldReplicateTopic(ba, 'mm2-offset-syncs.A.internal'));
});

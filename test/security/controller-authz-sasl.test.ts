// The controller listener's principal from SASL: a 3-node cluster whose listeners are SASL_SSL with
// PLAIN, the StandardAuthorizer on, and the nodes' own logins (User:controller on the controller
// listener, User:broker between brokers) in super.users. The quorum forms and changes are
// forwarded; a user who logs in to the controller listener but is not a super user is refused
// there with CLUSTER_AUTHORIZATION_FAILED, on the quorum's APIs and the controller's alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startCluster } from '../../src/node/index.js';
import { BrokerConnection, type ClientSasl } from '../../src/client/index.js';
import { ApiKey, ErrorCode, defaultMessage } from '../../src/protocol/index.js';
import { writeDevCerts } from '../../src/security/index.js';
import { pkcs12Stores } from './tls-config.js';

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
if (process.env.CI && !hasOpenssl) throw new Error('openssl is needed in CI');

const plain = (users: Record<string, string>, me: string) => `org.apache.kafka.common.security.plain.PlainLoginModule required username="${me}" password="${users[me]}" `
  + Object.entries(users).map(([u, p]) => `user_${u}="${p}"`).join(' ') + ';';

test('SASL_SSL controller listener with the authorizer: the cluster works as its super users; another SASL user there is refused', { skip: hasOpenssl ? false : 'openssl is not installed', timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'logline-controller-authz-sasl-'));
  const certs = writeDevCerts(join(dir, 'certs'));
  const cluster = await startCluster({
    nodes: 3,
    config: {
      'listener.security.protocol.map': 'CONTROLLER:SASL_SSL,PLAINTEXT:SASL_SSL',
      ...pkcs12Stores(certs),
      'sasl.enabled.mechanisms': 'PLAIN',
      'sasl.mechanism.inter.broker.protocol': 'PLAIN',
      'sasl.mechanism.controller.protocol': 'PLAIN',
      'listener.name.controller.plain.sasl.jaas.config': plain({ controller: 'controller-secret', intruder: 'intruder-secret' }, 'controller'),
      'listener.name.plaintext.plain.sasl.jaas.config': plain({ broker: 'broker-secret', admin: 'admin-secret' }, 'broker'),
      'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
      'super.users': 'User:controller;User:broker;User:admin',
    },
  });
  const tls = { ca: readFileSync(certs.caCert) };
  const open = (port: number, sasl: ClientSasl) => BrokerConnection.open({ host: '127.0.0.1', port, tls, sasl });
  try {
    const leader = cluster.nodes.find((n) => n.nodeId === cluster.leaderId())!;
    const other = cluster.nodes.find((n) => n.nodeId !== leader.nodeId)!;
    const admin = await open(other.brokerPort, { mechanism: 'PLAIN', username: 'admin', password: 'admin-secret' });
    try {
      const created = await admin.send(ApiKey.CreateTopics, 7, { topics: [{ name: 'orders', numPartitions: 1, replicationFactor: 3, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false });
      assert.equal(created.topics[0].errorCode, ErrorCode.NONE, created.topics[0].errorMessage);
    } finally {
      admin.close();
    }
    const intruder = await open(leader.controllerPort, { mechanism: 'PLAIN', username: 'intruder', password: 'intruder-secret' });
    try {
      const vote = await intruder.send(ApiKey.Vote, 1, { ...defaultMessage('VoteRequest', 1), clusterId: cluster.clusterId });
      assert.equal(vote.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      const pids = await intruder.send(ApiKey.AllocateProducerIds, 0, { brokerId: other.nodeId, brokerEpoch: 1n });
      assert.equal(pids.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      const created = await intruder.send(ApiKey.CreateTopics, 7, { topics: [{ name: 'sneaky', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false });
      assert.equal(created.topics[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'a raw request to the controller is authorized as its sender');
    } finally {
      intruder.close();
    }
    // The controllers' own login describes the quorum there.
    const operator = await open(leader.controllerPort, { mechanism: 'PLAIN', username: 'controller', password: 'controller-secret' });
    try {
      const q = await operator.send(ApiKey.DescribeQuorum, 2, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] });
      assert.equal(q.errorCode, ErrorCode.NONE);
      assert.equal(q.topics[0].partitions[0].leaderId, leader.nodeId);
    } finally {
      operator.close();
    }
  } finally {
    await cluster.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

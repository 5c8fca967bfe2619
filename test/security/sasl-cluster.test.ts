// A 3-node cluster whose every listener is SASL_SSL: brokers log in to each other with PLAIN
// (sasl.mechanism.inter.broker.protocol), controllers to each other and brokers to the controller
// with PLAIN (sasl.mechanism.controller.protocol; SCRAM credentials live in the metadata log, so
// they cannot open it). A SCRAM-SHA-512 user created through one broker (forwarded to the active
// controller) exists on every broker, works for kcat on an RF 3 topic that replicates over SASL,
// and still works on a node after it restarts; the controller listener refuses a connection that
// has not logged in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { runProcess } from '../broker/process-helpers.js';
import { startCluster } from '../../src/node/index.js';
import { BrokerConnection, ClusterClient, type ClientSasl } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { SCRAM_MECHANISM_IDS, scramUpsertion, writeDevCerts } from '../../src/security/index.js';
import { pkcs12Stores } from './tls-config.js';

const hasKcat = spawnSync('kcat', ['-V']).status === 0;
const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
const skip = !hasOpenssl ? 'openssl is not installed' : hasKcat ? false : 'kcat is not installed';

test('3-node cluster, every listener SASL_SSL: a SCRAM user made on one broker authenticates on every broker, replicates an RF 3 topic, and survives a restart', { skip, timeout: 180_000 }, async () => {
  const certs = writeDevCerts(join(mkdtempSync(join(tmpdir(), 'logline-sasl-cluster-')), 'certs'));
  const cluster = await startCluster({
    nodes: 3,
    config: {
      'listener.security.protocol.map': 'CONTROLLER:SASL_SSL,PLAINTEXT:SASL_SSL',
      ...pkcs12Stores(certs),
      'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-512',
      'sasl.mechanism.inter.broker.protocol': 'PLAIN',
      'sasl.mechanism.controller.protocol': 'PLAIN',
      'listener.name.controller.sasl.enabled.mechanisms': 'PLAIN',
      'listener.name.controller.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required username="controller" password="controller-secret" user_controller="controller-secret";',
      'listener.name.plaintext.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="broker-secret" user_broker="broker-secret" user_admin="admin-secret";',
    },
  });
  const tls = { ca: readFileSync(certs.caCert) };
  const addresses = cluster.bootstrap.split(',');
  const clientOf = (address: string, sasl: ClientSasl) => new ClusterClient({ bootstrap: address, tls, sasl });
  const scram: ClientSasl = { mechanism: 'SCRAM-SHA-512', username: 'carol', password: 'carol-secret' };
  const describeOn = async (address: string) => {
    const c = clientOf(address, scram);
    try {
      const r = await c.admin(ApiKey.DescribeUserScramCredentials, { users: [{ name: 'carol' }] });
      return r.results.map((x: { user: string; credentialInfos: unknown[] }) => ({ user: x.user, credentialInfos: x.credentialInfos }));
    } finally {
      c.close();
    }
  };
  const admin = clientOf(addresses[2]!, { mechanism: 'PLAIN', username: 'admin', password: 'admin-secret' });
  try {
    const u = scramUpsertion('carol', 'SCRAM-SHA-512', 'carol-secret', 8192);
    const altered = await admin.admin(ApiKey.AlterUserScramCredentials, { deletions: [], upsertions: [{ name: 'carol', mechanism: SCRAM_MECHANISM_IDS['SCRAM-SHA-512'], iterations: u.iterations, salt: u.salt, saltedPassword: u.saltedPassword }] });
    assert.deepEqual(altered.results, [{ user: 'carol', errorCode: ErrorCode.NONE, errorMessage: null }]);
    // A second alteration of the same user and mechanism in one request is refused as Kafka does.
    const dup = await admin.admin(ApiKey.AlterUserScramCredentials, { deletions: [{ name: 'carol', mechanism: 2 }], upsertions: [{ name: 'carol', mechanism: 2, iterations: 4096, salt: u.salt, saltedPassword: u.saltedPassword }] });
    assert.equal(dup.results[0].errorCode, ErrorCode.DUPLICATE_RESOURCE);
    const created = await admin.admin(ApiKey.CreateTopics, { topics: [{ name: 'sasl-rf3', numPartitions: 2, replicationFactor: 3, assignments: [],
      configs: [{ name: 'min.insync.replicas', value: '3' }] }], timeoutMs: 10_000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, 0, created.topics[0].errorMessage);
    // Every broker knows carol (SCRAM authentication against it is the proof) and describes her credential.
    for (const address of addresses) assert.deepEqual(await describeOn(address), [{ user: 'carol', credentialInfos: [{ mechanism: 2, iterations: 8192 }] }]);
    const kcat = (address: string) => ['-b', address, '-X', 'security.protocol=SASL_SSL', '-X', 'sasl.mechanism=SCRAM-SHA-512', '-X', 'sasl.username=carol',
      '-X', 'sasl.password=carol-secret', '-X', `ssl.ca.location=${certs.caCert}`];
    // acks=all with min.insync.replicas=3: each write is copied to both followers over SASL_SSL.
    const p = await runProcess('kcat', ['-P', ...kcat(addresses[0]!), '-t', 'sasl-rf3', '-X', 'acks=all', '-X', 'message.timeout.ms=60000'],
      Array.from({ length: 30 }, (_, i) => `v${i}`).join('\n') + '\n', 90_000);
    assert.equal(p.code, 0, p.stderr);
    const c = await runProcess('kcat', ['-C', ...kcat(addresses[1]!), '-t', 'sasl-rf3', '-o', 'beginning', '-c', '30', '-e', '-q', '-f', '%s\\n'], null, 60_000);
    assert.equal(c.code, 0, c.stderr);
    assert.equal(c.stdout.trim().split('\n').length, 30);
    const meta = JSON.parse((await runProcess('kcat', ['-L', '-J', ...kcat(addresses[0]!), '-t', 'sasl-rf3'])).stdout);
    for (const part of meta.topics[0].partitions) assert.equal(part.isrs.length, 3, JSON.stringify(part));
    // The credential is in the metadata log: a restarted node still has it.
    const node = cluster.nodes[1]!;
    await node.kill();
    await node.restart();
    assert.deepEqual(await describeOn(addresses[1]!), [{ user: 'carol', credentialInfos: [{ mechanism: 2, iterations: 8192 }] }]);
    // The controller listener serves nobody who has not logged in (the connection is closed).
    const node0 = cluster.nodes[0]!;
    const anonymous = await BrokerConnection.open({ host: node0.host, port: node0.controllerPort, tls });
    await assert.rejects(anonymous.send(ApiKey.CreateTopics, 7, { topics: [], timeoutMs: 1000, validateOnly: false }));
    anonymous.close();
    const wrong = await runProcess('kcat', ['-L', ...kcat(addresses[1]!).map((a) => (a === 'sasl.password=carol-secret' ? 'sasl.password=nope' : a)), '-m', '5']);
    assert.notEqual(wrong.code, 0);
  } finally {
    admin.close();
    await cluster.close();
  }
});

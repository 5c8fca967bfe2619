// The registry listener secured: the listener named SCHEMA_REGISTRY in
// listener.security.protocol.map. SASL_SSL serves HTTPS with the broker's ssl.* keystore and asks
// for HTTP Basic, checked against the listener's PLAIN users and the SCRAM credentials in the
// metadata; with the authorizer on, Kafka ACLs decide (a subject <topic>-value by its topic's
// ACLs, the global config by the cluster's). Refusals are Confluent's 401/40101 and 403/40301.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster, startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { writeDevCerts, scramUpsertion, SCRAM_MECHANISM_IDS, AclOperation as Op, AclPermissionType, PatternType, ResourceType, type DevCerts } from '../../src/security/index.js';

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
if (process.env.CI && !hasOpenssl) throw new Error('openssl is needed in CI');
const skip = hasOpenssl ? false : 'openssl is not installed';

let certs: DevCerts;
let server: ServerHandle;
let admin: ClusterClient;
let ca: Buffer;

before(async () => {
  if (!hasOpenssl) return;
  certs = writeDevCerts(join(mkdtempSync(join(tmpdir(), 'logline-registry-sec-')), 'certs'));
  ca = readFileSync(certs.caCert);
  const config = parseBrokerConfig({
    'node.id': '1', 'http.listener': '', 'schema.registry.listener': '127.0.0.1:0',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SCHEMA_REGISTRY:SASL_SSL',
    'ssl.keystore.type': 'PKCS12', 'ssl.keystore.location': certs.brokerKeystoreP12, 'ssl.keystore.password': certs.devPassword,
    'listener.name.schema_registry.sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256',
    'listener.name.schema_registry.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret";',
    'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    // The test's own Kafka client is ANONYMOUS on the PLAINTEXT listener; the registry listener never sees ANONYMOUS (Basic is required).
    'super.users': 'User:admin;User:ANONYMOUS',
  });
  server = await startServer({ config, listeners: ['PLAINTEXT://127.0.0.1:0'], schemaRegistry: true });
  admin = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
});
after(async () => { admin?.close(); await server?.close(); });

function call(method: string, path: string, auth: string | null, body?: unknown): Promise<{ status: number; json: any }> {
  const url = new URL(path, server.schemaRegistryUrl!);
  return new Promise((resolve, reject) => {
    const text = body === undefined ? null : JSON.stringify(body);
    const req = request(url, {
      method, ca, servername: 'localhost',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json', ...(auth ? { authorization: `Basic ${Buffer.from(auth).toString('base64')}` } : {}) },
    }, (res) => {
      let data = '';
      res.on('data', (d) => { data += d; });
      res.on('end', () => resolve({ status: res.statusCode!, json: data ? JSON.parse(data) : null }));
    });
    req.on('error', reject);
    req.end(text ?? undefined);
  });
}

const ADMIN = 'admin:admin-secret';
const ALICE = 'alice:alice-secret';
const schema = (name: string) => ({ schema: JSON.stringify({ type: 'record', name, fields: [{ name: 'a', type: 'int' }] }) });

async function allow(principal: string, resourceType: number, resourceName: string, operation: number): Promise<void> {
  const r = await admin.admin(ApiKey.CreateAcls, { creations: [{ resourceType, resourceName, resourcePatternType: PatternType.LITERAL, principal, host: '*', operation, permissionType: AclPermissionType.ALLOW }] }, 3);
  assert.deepEqual(r.results.map((x: any) => x.errorCode), [0]);
  // ACLs reach the broker's image through the metadata log.
  await new Promise((r2) => setTimeout(r2, 300));
}

test('HTTPS with the broker keystore; no or wrong credentials: 401 with 40101', { skip }, async () => {
  assert.match(server.schemaRegistryUrl!, /^https:\/\//);
  const none = await call('GET', '/subjects', null);
  assert.equal(none.status, 401);
  assert.equal(none.json.error_code, 40101);
  assert.equal((await call('GET', '/subjects', 'admin:wrong')).status, 401);
  assert.equal((await call('GET', '/subjects', 'nobody:x')).status, 401);
  assert.equal((await call('GET', '/subjects', ADMIN)).status, 200);
});

test('ACLs: a subject <topic>-value follows its topic\'s ACLs, listings show only readable subjects, the global config needs the cluster\'s', { skip }, async () => {
  const secret = await call('POST', '/subjects/secret-value/versions', ADMIN, schema('Secret'));
  assert.equal(secret.status, 200);
  const denied = await call('POST', '/subjects/orders-value/versions', ALICE, schema('Order'));
  assert.equal(denied.status, 403);
  assert.equal(denied.json.error_code, 40301);
  assert.match(denied.json.message, /User:alice is denied operation Write on Subject: orders-value/);
  await allow('User:alice', ResourceType.TOPIC, 'orders', Op.WRITE);
  const mine = await call('POST', '/subjects/orders-value/versions', ALICE, schema('Order'));
  assert.equal(mine.status, 200, JSON.stringify(mine.json));
  // WRITE implies DESCRIBE: alice reads what she registered, and nothing else.
  assert.deepEqual((await call('GET', '/subjects', ALICE)).json, ['orders-value']);
  assert.deepEqual((await call('GET', '/subjects', ADMIN)).json, ['orders-value', 'secret-value']);
  assert.equal((await call('GET', `/schemas/ids/${mine.json.id}`, ALICE)).status, 200);
  assert.equal((await call('GET', `/schemas/ids/${secret.json.id}`, ALICE)).status, 403);
  assert.equal((await call('GET', '/subjects/secret-value/versions', ALICE)).status, 403);
  // The global config: DESCRIBE_CONFIGS / ALTER_CONFIGS on the cluster.
  assert.equal((await call('GET', '/config', ALICE)).status, 403);
  assert.equal((await call('PUT', '/config', ALICE, { compatibility: 'NONE' })).status, 403);
  await allow('User:alice', ResourceType.CLUSTER, 'kafka-cluster', Op.DESCRIBE_CONFIGS);
  assert.equal((await call('GET', '/config', ALICE)).json.compatibilityLevel, 'BACKWARD');
  assert.equal((await call('PUT', '/config', ADMIN, { compatibility: 'FULL' })).status, 200);
  // A record-name subject is the cluster's: DESCRIBE to read, ALTER to write.
  assert.equal((await call('POST', '/subjects/shop.Order/versions', ALICE, schema('Order'))).status, 403);
});

test('HTTP Basic with a SCRAM user from the metadata', { skip }, async () => {
  const u = scramUpsertion('carol', 'SCRAM-SHA-256', 'carol-secret', 4096);
  const r = await admin.admin(ApiKey.AlterUserScramCredentials, { deletions: [], upsertions: [{ name: 'carol', mechanism: SCRAM_MECHANISM_IDS['SCRAM-SHA-256'], iterations: u.iterations, salt: u.salt, saltedPassword: u.saltedPassword }] });
  assert.equal(r.results[0].errorCode, 0);
  await new Promise((r2) => setTimeout(r2, 300));
  assert.equal((await call('GET', '/subjects', 'carol:wrong')).status, 401);
  const ok = await call('GET', '/subjects', 'carol:carol-secret');
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.json, []);
});

test('three nodes on HTTPS: writes through any node are forwarded to the writer over TLS (the truststore trusts the other nodes)', { skip, timeout: 120_000 }, async () => {
  const cluster = await startCluster({
    nodes: 3, schemaRegistry: true,
    config: {
      'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SCHEMA_REGISTRY:SSL',
      'ssl.keystore.type': 'PKCS12', 'ssl.keystore.location': certs.brokerKeystoreP12, 'ssl.keystore.password': certs.devPassword,
      'ssl.truststore.type': 'PEM', 'ssl.truststore.location': certs.caCert,
    },
  });
  try {
    const ids: number[] = [];
    for (const [i, n] of cluster.nodes.entries()) {
      assert.match(n.schemaRegistryUrl!, /^https:/);
      const url = new URL(`/subjects/s${i}-value/versions`, n.schemaRegistryUrl!);
      const r = await new Promise<{ status: number; json: any }>((resolve, reject) => {
        const req = request(url, { method: 'POST', ca, servername: 'localhost', headers: { 'content-type': 'application/json' } }, (res) => {
          let data = '';
          res.on('data', (d) => { data += d; });
          res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(data) }));
        });
        req.on('error', reject);
        req.end(JSON.stringify(schema(`R${i}`)));
      });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      ids.push(r.json.id);
    }
    assert.deepEqual(ids, [1, 2, 3]);
  } finally {
    await cluster.close();
  }
});

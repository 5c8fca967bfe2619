// `logline schema` as a user runs it, the real binary against a node serving the schema registry:
// register an Avro schema and a compatible evolution, check and be refused an incompatible one
// (exit 1 with the registry's error_code and the reasons one a line, nothing stored), read by id,
// version and latest, list subjects and versions, set the subject's level to NONE so the same
// schema registers, READONLY mode, soft then permanent deletes; a Protobuf schema with a
// reference and a JSON Schema; --json output that parses; usage errors (exit 2) and an
// unreachable registry. Then a registry that asks for HTTP Basic: refused without credentials,
// accepted with --basic-auth, --command-config's basic.auth.user.info and SASL_INHERIT; over HTTPS,
// a private CA trusted through NODE_EXTRA_CA_CERTS; a registry that requires a client certificate
// (ssl.client.auth=required) reached with Confluent's schema.registry.ssl.* properties; with Kafka ACLs, a producer that may write its
// topic registers and checks its subject without rights to the global config.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { runProcess, until } from '../broker/process-helpers.js';
import { AclOperation, AclPermissionType, PatternType, ResourceType, writeDevCerts } from '../../src/security/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';

const BIN = 'bin/logline.js';
const dir = mkdtempSync(join(tmpdir(), 'logline-schema-cli-'));
const file = (name: string, text: string) => { const path = join(dir, name); writeFileSync(path, text); return path; };

const ORDER_V1 = { type: 'record', name: 'Order', namespace: 'shop', fields: [{ name: 'id', type: 'long' }, { name: 'item', type: 'string' }] };
const ORDER_V2 = { ...ORDER_V1, fields: [...ORDER_V1.fields, { name: 'qty', type: 'int', default: 1 }] };
// A new field without a default: a BACKWARD reader cannot read the old records.
const ORDER_BAD = { ...ORDER_V1, fields: [...ORDER_V1.fields, { name: 'price', type: 'double' }] };

const MISSING_DEFAULT = "READER_FIELD_MISSING_DEFAULT_VALUE: The field 'price' at path '/fields/2' in the new schema has no default value and is missing in the old schema";

let server: ServerHandle;
let secured: ServerHandle;

before(async () => {
  server = await startServer({
    config: parseBrokerConfig({ 'node.id': '1', 'schema.registry.listener': '127.0.0.1:0', 'http.listener': '' }),
    listeners: ['PLAINTEXT://127.0.0.1:0'], schemaRegistry: true,
  });
  secured = await startServer({
    config: parseBrokerConfig({
      'node.id': '1', 'schema.registry.listener': '127.0.0.1:0', 'http.listener': '',
      'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SCHEMA_REGISTRY:SASL_PLAINTEXT',
      'listener.name.schema_registry.sasl.enabled.mechanisms': 'PLAIN',
      'listener.name.schema_registry.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";',
    }),
    listeners: ['PLAINTEXT://127.0.0.1:0'], schemaRegistry: true,
  });
});
after(async () => { await server?.close(); await secured?.close(); });

/** `logline schema ...args` against `url` (through the environment, as a shell user would set it once). */
async function schema(url: string, ...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const r = await runProcess(process.execPath, [BIN, 'schema', ...args], null, 60_000, { LOGLINE_SCHEMA_REGISTRY_URL: url });
  return { code: r.code, out: r.stdout, err: r.stderr };
}

/** The registry's own answer, for what the CLI must not have changed. */
async function rest(path: string): Promise<unknown> {
  return (await fetch(`${server.schemaRegistryUrl}${path}`)).json();
}

test('register, evolve, be refused, read, configure, delete: an Avro subject through logline schema', { timeout: 240_000 }, async () => {
  const url = server.schemaRegistryUrl!;
  const cli = (...args: string[]) => schema(url, ...args);
  const v1 = file('order.avsc', JSON.stringify(ORDER_V1, null, 2));
  const v2 = file('order-v2.avsc', JSON.stringify(ORDER_V2));
  const bad = file('order-bad.avsc', JSON.stringify(ORDER_BAD));

  let r = await cli('register', '--subject', 'orders-value', '--file', v1);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, 'registered: subject orders-value version 1 id 1\n');
  r = await cli('register', '--subject', 'orders-value', '--file', v1, '--json');
  assert.deepEqual(JSON.parse(r.out), { subject: 'orders-value', version: 1, id: 1, registered: false }, 'the same schema again: its version and id');

  r = await cli('check', '--subject', 'orders-value', '--file', v2);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, 'compatible with subject orders-value (BACKWARD)\n');
  r = await cli('register', '--subject', 'orders-value', '--file', v2);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, 'registered: subject orders-value version 2 id 2\n');

  r = await cli('compat', '--subject', 'orders-value', '--file', bad);
  assert.equal(r.code, 1, 'an incompatible schema fails the check');
  assert.equal(r.out, `incompatible with subject orders-value (BACKWARD):\n  - version 2: ${MISSING_DEFAULT}\n`);
  r = await cli('check', '--subject', 'orders-value', '--file', bad, '--version', '1', '--json');
  assert.equal(r.code, 1);
  const check = JSON.parse(r.out);
  assert.equal(check.is_compatible, false);
  assert.ok(check.messages.some((m: string) => m.includes('READER_FIELD_MISSING_DEFAULT_VALUE')), r.out);

  r = await cli('register', '--subject', 'orders-value', '--file', bad);
  assert.equal(r.code, 1);
  assert.equal(r.out, '');
  assert.equal(r.err, `error 409 (HTTP 409): Schema being registered is incompatible with an earlier schema for subject "orders-value":\n  - version 2: ${MISSING_DEFAULT}\n`);
  assert.deepEqual(await rest('/subjects/orders-value/versions'), [1, 2], 'nothing registered');

  r = await cli('get', '--id', '1', '--json');
  assert.equal(r.code, 0, r.err);
  const byId = JSON.parse(r.out);
  assert.deepEqual(JSON.parse(byId.schema), ORDER_V1);
  assert.deepEqual(byId.versions, [{ subject: 'orders-value', version: 1 }]);
  r = await cli('get', '--subject', 'orders-value');
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^subject orders-value {2}version 2 {2}id 2 {2}type AVRO\n\{\n {2}"type": "record",/);
  assert.deepEqual(JSON.parse(r.out.slice(r.out.indexOf('\n') + 1)), ORDER_V2, 'the schema, indented, after the header line');
  r = await cli('get', '--subject', 'orders-value', '--version', '1', '--json');
  assert.deepEqual({ ...JSON.parse(r.out), schema: undefined }, { subject: 'orders-value', version: 1, id: 1, schema: undefined });

  r = await cli('versions', '--subject', 'orders-value');
  assert.equal(r.out, 'VERSION  ID  TYPE\n1        1   AVRO\n2        2   AVRO\n');

  // The level of the subject alone: NONE lets the refused schema in.
  r = await cli('config', '--subject', 'orders-value', '--json');
  assert.deepEqual(JSON.parse(r.out), { subject: 'orders-value', compatibility: 'BACKWARD', source: 'global' });
  r = await cli('config', '--subject', 'orders-value', '--compatibility', 'none');
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, 'compatibility of subject orders-value set to NONE\n');
  assert.equal((await cli('config')).out, 'global compatibility: BACKWARD\n');
  r = await cli('register', '--subject', 'orders-value', '--file', bad);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, 'registered: subject orders-value version 3 id 3\n');
  r = await cli('config', '--subject', 'orders-value', '--compatibility', 'SIDEWAYS');
  assert.equal(r.code, 1);
  assert.match(r.err, /^error 42203 \(HTTP 422\): Invalid compatibility level/);

  r = await cli('mode', '--subject', 'orders-value', '--mode', 'READONLY');
  assert.equal(r.code, 0, r.err);
  r = await cli('register', '--subject', 'orders-value', '--schema', '"string"');
  assert.equal(r.code, 1);
  assert.match(r.err, /^error 42205 \(HTTP 422\): Subject orders-value is in read-only mode/);
  assert.equal((await cli('mode', '--subject', 'orders-value', '--delete')).out, 'mode of subject orders-value removed: the global mode (READWRITE) applies\n');

  // Soft, then permanent: a permanent delete needs the soft one first.
  r = await cli('delete', '--subject', 'orders-value', '--version', '1');
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^soft-deleted subject orders-value version 1 /);
  r = await cli('versions', '--subject', 'orders-value', '--deleted', '--json');
  assert.deepEqual(JSON.parse(r.out), [
    { version: 1, id: 1, type: 'AVRO', deleted: true }, { version: 2, id: 2, type: 'AVRO', deleted: false }, { version: 3, id: 3, type: 'AVRO', deleted: false },
  ]);
  r = await cli('delete', '--subject', 'orders-value', '--permanent');
  assert.equal(r.code, 1);
  assert.match(r.err, /^error 40405 \(HTTP 404\): Subject 'orders-value' was not deleted first/);
  r = await cli('delete', '--subject', 'orders-value', '--json');
  assert.deepEqual(JSON.parse(r.out), { subject: 'orders-value', versions: [2, 3], permanent: false });
  assert.deepEqual(JSON.parse((await cli('subjects', '--json')).out), []);
  assert.deepEqual(JSON.parse((await cli('subjects', '--deleted', '--json')).out), [{ subject: 'orders-value', latest: 3, id: 3, type: 'AVRO', deleted: true }]);
  r = await cli('delete', '--subject', 'orders-value', '--permanent');
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, 'permanently deleted subject orders-value (versions 1, 2, 3)\n');
  assert.deepEqual(await rest('/subjects?deleted=true'), []);

  r = await cli('get', '--subject', 'orders-value');
  assert.equal(r.code, 1);
  assert.equal(r.err, "error 40401 (HTTP 404): Subject 'orders-value' not found.\n");
});

test('Protobuf with a reference and JSON Schema; usage errors and an unreachable registry', { timeout: 180_000 }, async () => {
  const url = server.schemaRegistryUrl!;
  const cli = (...args: string[]) => schema(url, ...args);
  const money = file('money.proto', 'syntax = "proto3";\npackage shop;\n\nmessage Money {\n  int64 cents = 1;\n  string currency = 2;\n}\n');
  const payment = file('payment.proto', 'syntax = "proto3";\npackage shop;\n\nimport "money.proto";\n\nmessage Payment {\n  string order_id = 1;\n  Money amount = 2;\n}\n');
  let r = await cli('register', '--subject', 'money', '--file', money);
  assert.equal(r.code, 0, r.err);
  r = await cli('register', '--subject', 'payments-value', '--file', payment, '--reference', 'money.proto=money:latest', '--json');
  assert.equal(r.code, 0, r.err);
  const { id } = JSON.parse(r.out);
  r = await cli('get', '--id', String(id));
  assert.match(r.out, new RegExp(`^id ${id} {2}type PROTOBUF {2}used by payments-value version 1\nreferences: money.proto=money:1\nsyntax = "proto3";`));
  r = await cli('register', '--subject', 'payments-value', '--file', payment);
  assert.equal(r.code, 1, 'without its reference the import cannot be resolved');
  assert.match(r.err, /^error 42201 \(HTTP 422\): Invalid schema/);

  r = await cli('register', '--subject', 'events-value', '--type', 'JSON', '--schema', JSON.stringify({ type: 'object', properties: { n: { type: 'integer' } } }));
  assert.equal(r.code, 0, r.err);
  r = await cli('list');
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^SUBJECT\s+LATEST\s+ID\s+TYPE\n/);
  assert.match(r.out, /\nevents-value\s+1\s+\d+\s+JSON\n/);
  assert.match(r.out, /\npayments-value\s+1\s+\d+\s+PROTOBUF\n/);
  assert.deepEqual(JSON.parse((await cli('subjects', '--prefix', 'pay', '--json')).out).map((s: { subject: string }) => s.subject), ['payments-value']);

  for (const args of [
    ['register', '--file', money], ['register', '--subject', 's'], ['get', '--subject', 's', '--version', 'first'],
    ['get', '--id', '1', '--subject', 's'], ['register', '--subject', 's', '--schema', '{}', '--type', 'XML'], ['frobnicate'],
    ['config', '--compatibility', 'NONE', '--delete'], ['register', '--subject', 's', '--file', money, '--reference', 'money.proto'],
  ]) {
    r = await cli(...args);
    assert.equal(r.code, 2, `${args.join(' ')}: a usage error (${r.err})`);
    assert.match(r.err, /Run `logline schema --help` for usage\./);
  }
  // A port nobody listens on (the test server's Kafka port speaks no HTTP; a closed one is refused).
  const closed = await import('node:net').then(({ createServer }) => new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => { const port = (s.address() as { port: number }).port; s.close(() => resolve(port)); });
  }));
  r = await schema(`http://127.0.0.1:${closed}`, 'subjects');
  assert.equal(r.code, 1);
  assert.equal(r.err, `cannot reach the schema registry at http://127.0.0.1:${closed}: ECONNREFUSED\n`);
});

test('a registry that asks for HTTP Basic: --basic-auth, --command-config (basic.auth.user.info, SASL_INHERIT)', { timeout: 120_000 }, async () => {
  const url = secured.schemaRegistryUrl!;
  let r = await schema(url, 'subjects');
  assert.equal(r.code, 1);
  assert.match(r.err, /^error 40101 \(HTTP 401\): Unauthorized/);
  r = await schema(url, 'subjects', '--basic-auth', 'alice:wrong');
  assert.equal(r.code, 1);
  assert.match(r.err, /^error 40101 /);
  r = await schema(url, 'register', '--subject', 'a-value', '--schema', '"string"', '--basic-auth', 'alice:alice-secret');
  assert.equal(r.code, 0, r.err);
  // The properties a Confluent serializer is given, and the URL from the file rather than the environment.
  const userInfo = file('registry.properties', `schema.registry.url=${url}\nbasic.auth.credentials.source=USER_INFO\nbasic.auth.user.info=alice:alice-secret\n`);
  r = await schema('http://127.0.0.1:1', 'subjects', '--command-config', userInfo, '--json');
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(JSON.parse(r.out), [{ subject: 'a-value', latest: 1, id: 1, type: 'AVRO' }]);
  const inherit = file('client.properties', [
    'security.protocol=SASL_PLAINTEXT', 'sasl.mechanism=PLAIN',
    'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";',
    'basic.auth.credentials.source=SASL_INHERIT', '',
  ].join('\n'));
  r = await schema(url, 'get', '--subject', 'a-value', '--command-config', inherit);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, 'subject a-value  version 1  id 1  type AVRO\n"string"\n');
});

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
if (process.env.CI && !hasOpenssl) throw new Error('openssl is needed in CI');

test('an HTTPS registry signed by a private CA: refused without it, reached with NODE_EXTRA_CA_CERTS', { skip: hasOpenssl ? false : 'openssl is not installed', timeout: 120_000 }, async () => {
  const certs = writeDevCerts(join(dir, 'certs'));
  const tls = await startServer({
    config: parseBrokerConfig({
      'node.id': '1', 'schema.registry.listener': '127.0.0.1:0', 'http.listener': '',
      'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SCHEMA_REGISTRY:SASL_SSL',
      'ssl.keystore.type': 'PKCS12', 'ssl.keystore.location': certs.brokerKeystoreP12, 'ssl.keystore.password': certs.devPassword,
      'listener.name.schema_registry.sasl.enabled.mechanisms': 'PLAIN',
      'listener.name.schema_registry.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";',
    }),
    listeners: ['PLAINTEXT://127.0.0.1:0'], schemaRegistry: true,
  });
  try {
    const url = tls.schemaRegistryUrl!;
    assert.match(url, /^https:\/\//);
    let r = await schema(url, 'subjects', '--basic-auth', 'alice:alice-secret');
    assert.equal(r.code, 1);
    assert.match(r.err, new RegExp(`^cannot reach the schema registry at ${url}: [A-Z_]+ \\(trust its CA with schema\\.registry\\.ssl\\.truststore\\.location in --command-config, or NODE_EXTRA_CA_CERTS=ca\\.pem\\)\n$`), 'the CA is not trusted');
    const run = await runProcess(process.execPath, [BIN, 'schema', 'register', '--subject', 't-value', '--schema', '"long"', '--registry-url', url, '--basic-auth', 'alice:alice-secret'], null, 60_000,
      { NODE_EXTRA_CA_CERTS: certs.caCert });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'registered: subject t-value version 1 id 1\n');
  } finally {
    await tls.close();
  }
});

test('a registry that requires a client certificate: refused without one, reached with Confluent\'s keystore properties (PKCS12, PEM) and confluent-kafka-python\'s', { skip: hasOpenssl ? false : 'openssl is not installed', timeout: 120_000 }, async () => {
  const certs = writeDevCerts(join(dir, 'mtls-certs'));
  const mtls = await startServer({
    config: parseBrokerConfig({
      'node.id': '1', 'schema.registry.listener': '127.0.0.1:0', 'http.listener': '',
      'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SCHEMA_REGISTRY:SSL',
      'ssl.keystore.type': 'PKCS12', 'ssl.keystore.location': certs.brokerKeystoreP12, 'ssl.keystore.password': certs.devPassword,
      'ssl.truststore.type': 'PEM', 'ssl.truststore.location': certs.caCert,
      'listener.name.schema_registry.ssl.client.auth': 'required',
    }),
    listeners: ['PLAINTEXT://127.0.0.1:0'], schemaRegistry: true,
  });
  try {
    const url = mtls.schemaRegistryUrl!;
    assert.match(url, /^https:\/\//);
    const props = (name: string, ...lines: string[]) => file(name, [`schema.registry.url=${url}`, ...lines, ''].join('\n'));
    // The CA trusted, no certificate: the registry ends the handshake.
    const caOnly = props('ca-only.properties', `schema.registry.ssl.truststore.location=${certs.caCert}`, 'schema.registry.ssl.truststore.type=PEM');
    let r = await schema('http://127.0.0.1:1', 'subjects', '--command-config', caOnly);
    assert.equal(r.code, 1, r.out);
    assert.match(r.err, /^cannot reach the schema registry at https:\/\/[^:]+:\d+: \S+ \(the registry asks for a client certificate: schema\.registry\.ssl\.keystore\.location/, r.err);
    // Confluent's Java serializer properties: a PKCS12 keystore.
    const p12 = props('p12.properties', `schema.registry.ssl.truststore.location=${certs.caCert}`, 'schema.registry.ssl.truststore.type=PEM',
      `schema.registry.ssl.keystore.location=${certs.clientKeystoreP12}`, 'schema.registry.ssl.keystore.type=PKCS12', `schema.registry.ssl.keystore.password=${certs.devPassword}`);
    r = await schema('http://127.0.0.1:1', 'register', '--subject', 'm-value', '--schema', '"string"', '--command-config', p12);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, 'registered: subject m-value version 1 id 1\n');
    // A PEM keystore (certificate and key in one file), the type Confluent's clients also take.
    const pem = file('client.pem', readFileSync(certs.clientCert, 'latin1') + readFileSync(certs.clientKey, 'latin1'));
    const pemProps = props('pem.properties', `schema.registry.ssl.truststore.location=${certs.caCert}`, 'schema.registry.ssl.truststore.type=PEM',
      `schema.registry.ssl.keystore.location=${pem}`, 'schema.registry.ssl.keystore.type=PEM');
    r = await schema('http://127.0.0.1:1', 'get', '--subject', 'm-value', '--command-config', pemProps);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, 'subject m-value  version 1  id 1  type AVRO\n"string"\n');
    // confluent-kafka-python's SchemaRegistryClient names, with the prefix a shared client.properties gives them.
    const python = props('python.properties', `schema.registry.ssl.ca.location=${certs.caCert}`,
      `schema.registry.ssl.certificate.location=${certs.clientCert}`, `schema.registry.ssl.key.location=${certs.clientKey}`);
    r = await schema('http://127.0.0.1:1', 'subjects', '--command-config', python, '--json');
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(JSON.parse(r.out), [{ subject: 'm-value', latest: 1, id: 1, type: 'AVRO' }]);
    // Half a certificate is a usage error, not a refusal.
    const half = props('half.properties', `schema.registry.ssl.certificate.location=${certs.clientCert}`);
    r = await schema('http://127.0.0.1:1', 'subjects', '--command-config', half);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /schema\.registry\.ssl\.certificate\.location and schema\.registry\.ssl\.key\.location go together/);
  } finally {
    await mtls.close();
  }
});

test('with the authorizer on: a producer allowed to write its topic registers and checks its subject, and is refused the global config', { timeout: 120_000 }, async () => {
  const acl = await startServer({
    config: parseBrokerConfig({
      'node.id': '1', 'schema.registry.listener': '127.0.0.1:0', 'http.listener': '',
      'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SCHEMA_REGISTRY:SASL_PLAINTEXT',
      'listener.name.schema_registry.sasl.enabled.mechanisms': 'PLAIN',
      'listener.name.schema_registry.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="bob-secret";',
      'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
      // The test's own Kafka client (creating the ACL) is ANONYMOUS on the PLAINTEXT listener.
      'super.users': 'User:ANONYMOUS',
    }),
    listeners: ['PLAINTEXT://127.0.0.1:0'], schemaRegistry: true,
  });
  const admin = new ClusterClient({ bootstrap: `127.0.0.1:${acl.listeners[0]!.port}` });
  try {
    const url = acl.schemaRegistryUrl!;
    const bob = (...args: string[]) => schema(url, ...args, '--basic-auth', 'bob:bob-secret');
    const r0 = await admin.admin(ApiKey.CreateAcls, { creations: [{ resourceType: ResourceType.TOPIC, resourceName: 'orders', resourcePatternType: PatternType.LITERAL, principal: 'User:bob', host: '*', operation: AclOperation.WRITE, permissionType: AclPermissionType.ALLOW }] }, 3);
    assert.deepEqual(r0.results.map((x: { errorCode: number }) => x.errorCode), [0]);
    // The ACL reaches the registry's node through the metadata log.
    await until(30_000, 'bob may read orders-value', async () => {
      const res = await fetch(`${url}/subjects/orders-value/versions`, { headers: { authorization: `Basic ${Buffer.from('bob:bob-secret').toString('base64')}` } });
      return res.status === 403 ? undefined : true;
    }, 100);
    let r = await bob('register', '--subject', 'orders-value', '--schema', JSON.stringify(ORDER_V1));
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, 'registered: subject orders-value version 1 id 1\n');
    // The subject has no level of its own and bob may not read the global one: the answer without it.
    r = await bob('check', '--subject', 'orders-value', '--schema', JSON.stringify(ORDER_V2));
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, 'compatible with subject orders-value\n');
    r = await bob('check', '--subject', 'orders-value', '--schema', JSON.stringify(ORDER_BAD));
    assert.equal(r.out, `incompatible with subject orders-value (BACKWARD):\n  - version 1: ${MISSING_DEFAULT}\n`, 'the level named by the refusal');
    r = await bob('register', '--subject', 'invoices-value', '--schema', '"string"');
    assert.equal(r.code, 1);
    assert.equal(r.err, 'error 40301 (HTTP 403): User User:bob is denied operation Write on Subject: invoices-value\n');
    r = await bob('config');
    assert.equal(r.code, 1);
    assert.match(r.err, /^error 40301 \(HTTP 403\): User User:bob is denied operation Read on Config:/);
    assert.deepEqual(JSON.parse((await bob('subjects', '--json')).out).map((s: { subject: string }) => s.subject), ['orders-value']);
  } finally {
    admin.close();
    await acl.close();
  }
});

// --command-config: Kafka's client properties become our client's TLS and SASL settings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clientSecurityFromProperties } from '../../src/cli/command-config.js';
import { UsageError } from '../../src/cli/args.js';

test('SASL_PLAINTEXT with a ScramLoginModule jaas config, or librdkafka\'s sasl.username/password', () => {
  const jaas = clientSecurityFromProperties(new Map([
    ['security.protocol', 'SASL_PLAINTEXT'], ['sasl.mechanism', 'SCRAM-SHA-512'],
    ['sasl.jaas.config', 'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";'],
  ]));
  assert.deepEqual(jaas, { sasl: { mechanism: 'SCRAM-SHA-512', username: 'admin', password: 'admin-secret' } });
  const plain = clientSecurityFromProperties(new Map([['security.protocol', 'sasl_plaintext'], ['sasl.mechanism', 'PLAIN'], ['sasl.username', 'a'], ['sasl.password', 'b']]));
  assert.deepEqual(plain.sasl, { mechanism: 'PLAIN', username: 'a', password: 'b' });
  assert.equal(plain.tls, undefined);
});

test('PLAINTEXT needs nothing; SASL without credentials and an unknown protocol are usage errors', () => {
  assert.deepEqual(clientSecurityFromProperties(new Map()), {});
  assert.throws(() => clientSecurityFromProperties(new Map([['security.protocol', 'SASL_SSL'], ['sasl.mechanism', 'PLAIN']])), UsageError);
  assert.throws(() => clientSecurityFromProperties(new Map([['security.protocol', 'TLS']])), UsageError);
});

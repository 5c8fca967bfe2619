// ssl.principal.mapping.rules as Kafka parses and applies them, the listener.name.<l>.ssl.*
// overrides of the broker config, and the TLS settings errors a user sees.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mapPrincipalName, parsePrincipalMappingRules, listenerTls, SslConfigError } from '../../src/security/index.js';
import { parseBrokerConfig, BrokerConfigError } from '../../src/config/index.js';

const map = (rules: string, dn: string) => mapPrincipalName(parsePrincipalMappingRules(rules), dn);

test('DEFAULT keeps the whole distinguished name', () => {
  assert.equal(map('DEFAULT', 'CN=alice,O=Acme,C=GB'), 'CN=alice,O=Acme,C=GB');
});

test('the first matching rule wins; $1 replacements, L and U change case; patterns may hold commas and escaped slashes', () => {
  const rules = 'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, RULE:^CN=([^,]+),O=(.*)$/$2\\/$1/U,DEFAULT';
  assert.equal(map(rules, 'CN=Kafka-Admin,OU=ServiceUsers,O=Acme'), 'kafka-admin');
  assert.equal(map(rules, 'CN=bob,O=acme'), 'ACME/BOB');
  assert.equal(map(rules, 'O=only'), 'O=only');
});

test('a name no rule matches is refused, and a malformed rule is a config error', () => {
  assert.throws(() => map('RULE:^CN=(.*)$/$1/', 'O=x'), /no ssl.principal.mapping.rules rule matches O=x/);
  assert.throws(() => parsePrincipalMappingRules('RULE:^CN=(.*)$'), /malformed rule/);
  assert.throws(() => parsePrincipalMappingRules('SOMETHING'), /expected RULE: or DEFAULT/);
});

test('listener.name.<l>.ssl.* overrides ssl.* for that listener only, and security protocols come from the map', () => {
  const c = parseBrokerConfig({
    'listeners': 'INTERNAL://:9092,EXTERNAL://:9094',
    'listener.security.protocol.map': 'INTERNAL:PLAINTEXT,EXTERNAL:SSL',
    'inter.broker.listener.name': 'INTERNAL',
    'ssl.client.auth': 'requested',
    'listener.name.external.ssl.client.auth': 'required',
  });
  assert.equal(c.listenerValue('EXTERNAL', 'ssl.client.auth'), 'required');
  assert.equal(c.listenerValue('INTERNAL', 'ssl.client.auth'), 'requested');
  assert.equal(c.securityProtocolMap.get('EXTERNAL'), 'SSL');
  assert.equal(c.interBrokerListenerName, 'INTERNAL');
  // Without inter.broker.listener.name it is the listener named after security.inter.broker.protocol.
  assert.equal(parseBrokerConfig({ 'security.inter.broker.protocol': 'SSL' }).interBrokerListenerName, 'SSL');
});

test('per-listener keys are validated like the key they override, and must name a known listener', () => {
  assert.throws(() => parseBrokerConfig({ 'listener.name.ssl.ssl.client.auth': 'sometimes' }), BrokerConfigError);
  assert.throws(() => parseBrokerConfig({ 'listener.name.nosuch.ssl.client.auth': 'none' }), /listener NOSUCH is not in listener.security.protocol.map/);
  assert.throws(() => parseBrokerConfig({ 'listener.name.ssl.not.a.key': 'x' }), /Unknown|unknown/);
});

test('TLS settings errors name the key at fault', () => {
  const c = parseBrokerConfig({});
  const get = (over: Record<string, unknown>) => (k: string) => (k in over ? over[k] : c.get(k as never));
  assert.throws(() => listenerTls(get({})), /needs a keystore/);
  assert.throws(() => listenerTls(get({ 'ssl.keystore.location': '/nonexistent/ks.p12', 'ssl.keystore.type': 'PKCS12' })), /ssl.keystore.location \/nonexistent\/ks.p12/);
  assert.throws(() => listenerTls(get({ 'ssl.keystore.location': '/etc/hostname' })), /JKS is Java's own format|Java's own format/);
  assert.throws(() => listenerTls(get({ 'ssl.keystore.certificate.chain': 'x', 'ssl.keystore.key': 'y' })), SslConfigError);
});

// Broker settings the security tests share: a listener's PEM keystore and truststore, or every
// listener's PKCS12 stores, from the dev certificates (`writeDevCerts`).
import { join } from 'node:path';
import type { DevCerts } from '../../src/security/index.js';

/** `listener.name.<listener>.ssl.*`: the broker's PEM chain and key, and the CA as truststore. */
export function pemListenerTls(certs: DevCerts, listener = 'ssl'): Record<string, string> {
  const p = `listener.name.${listener}.ssl`;
  return {
    [`${p}.keystore.type`]: 'PEM', [`${p}.keystore.location`]: join(certs.dir, 'broker.pem'),
    [`${p}.truststore.type`]: 'PEM', [`${p}.truststore.location`]: certs.caCert,
  };
}

/** Node 1 with a PLAINTEXT and an SSL listener on free loopback ports, the SSL one with the dev certificates. */
export function plaintextAndSsl(certs: DevCerts): Record<string, string> {
  return {
    'node.id': '1',
    'listeners': 'PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SSL:SSL',
    ...pemListenerTls(certs),
  };
}

/** `ssl.*` for every listener: the dev PKCS12 keystore and truststore. */
export function pkcs12Stores(certs: DevCerts): Record<string, string> {
  return {
    'ssl.keystore.type': 'PKCS12', 'ssl.keystore.location': certs.brokerKeystoreP12, 'ssl.keystore.password': certs.devPassword,
    'ssl.truststore.type': 'PKCS12', 'ssl.truststore.location': certs.truststoreP12, 'ssl.truststore.password': certs.devPassword,
  };
}

/**
 * Every listener (the controller's too) SSL with client certificates required, the CN as the
 * principal, the StandardAuthorizer on, and the brokers' own certificate (CN=localhost) a super user.
 */
export function mtlsAuthorizedCluster(certs: DevCerts): Record<string, string> {
  return {
    'listener.security.protocol.map': 'CONTROLLER:SSL,PLAINTEXT:SSL',
    ...pkcs12Stores(certs),
    'ssl.client.auth': 'required',
    'ssl.principal.mapping.rules': 'RULE:^CN=([^,]+),O=Logline dev$/$1/L,DEFAULT',
    'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    'super.users': 'User:localhost',
  };
}

// `logline security dev-certs DIR`: a throwaway CA, a broker certificate for localhost/127.0.0.1 and
// a client certificate (PEM, plus PKCS12 stores), with the server.properties lines that use them.
// SASL users and ACLs will join this noun (issue 20's later slices).
import { resolve } from 'node:path';
import { writeDevCerts } from '../security/index.js';
import { helpText, parseArgs, type FlagSpec } from './args.js';
import { toJson } from './output.js';

const FLAGS: Record<string, FlagSpec> = {
  help: { type: 'boolean', help: 'show this help' },
  json: { type: 'boolean', help: 'print the written paths as JSON' },
  'client-name': { type: 'string', help: 'dev-certs: CN of the client certificate (default client)' },
};

const USAGE = 'logline security dev-certs DIR [--client-name NAME]';

export async function securityCommand(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, FLAGS);
  const [verb, dir] = positionals;
  if (flags.help || verb !== 'dev-certs' || dir === undefined) {
    console.log(helpText(USAGE, 'Write development certificates (a CA, a broker certificate for localhost and 127.0.0.1, a client certificate) with the system\'s openssl.', FLAGS));
    return flags.help ? 0 : 2;
  }
  let certs;
  try {
    certs = writeDevCerts(resolve(dir), flags['client-name'] ? { clientName: flags['client-name'] as string } : {});
  } catch (e) {
    console.error(`security dev-certs: ${(e as Error).message}`);
    return 1;
  }
  if (flags.json) {
    console.log(toJson(certs));
    return 0;
  }
  console.log([
    `wrote ${certs.dir}: ca.crt, broker.crt/broker.key/broker.pem, client.crt/client.key, broker.p12, client.p12, truststore.p12 (PKCS12 password ${certs.devPassword})`,
    '',
    'server.properties for an SSL listener next to PLAINTEXT:',
    '  listeners=PLAINTEXT://:9092,SSL://:9094',
    '  advertised.listeners=PLAINTEXT://localhost:9092,SSL://localhost:9094',
    '  ssl.keystore.type=PEM',
    `  ssl.keystore.location=${certs.dir}/broker.pem`,
    '  ssl.truststore.type=PEM',
    `  ssl.truststore.location=${certs.caCert}`,
    '',
    'a client:',
    `  kcat -b localhost:9094 -X security.protocol=SSL -X ssl.ca.location=${certs.caCert} -L`,
  ].join('\n'));
  return 0;
}

// Making SCRAM credentials: a salted password from a password (random salt, Kafka's default 4096
// iterations), and `--add-scram` values as `kafka-storage format --add-scram` takes them:
//   SCRAM-SHA-512=[name=admin,password=admin-secret]   (also iterations=8192, salt=<base64>)
import { randomBytes } from 'node:crypto';
import { MetadataRecordType, type MetadataRecord } from '../metadata/index.js';
import { limits } from '../util/index.js';
import { isScramMechanism, scramKeysFromSaltedPassword, scramSaltedPassword, SCRAM_MECHANISM_IDS, type ScramMechanismName } from './sasl-scram.js';

export const SCRAM_ITERATIONS_DEFAULT = 4096;
const SALT_BYTES = 32;

export interface ScramUpsertion {
  name: string;
  mechanism: ScramMechanismName;
  iterations: number;
  salt: Buffer;
  saltedPassword: Buffer;
}

/** What AlterUserScramCredentials sends for `password` (a fresh random salt unless one is given). */
export function scramUpsertion(name: string, mechanism: ScramMechanismName, password: string, iterations = SCRAM_ITERATIONS_DEFAULT, salt: Buffer = randomBytes(SALT_BYTES)): ScramUpsertion {
  if (iterations < limits.scramIterationsMin || iterations > limits.scramIterationsMax) {
    throw new Error(`iterations must be between ${limits.scramIterationsMin} and ${limits.scramIterationsMax}, got ${iterations}`);
  }
  return { name, mechanism, iterations, salt, saltedPassword: scramSaltedPassword(mechanism, password, salt, iterations) };
}

/** Parses one --add-scram value into the credential it asks for. */
export function parseAddScram(text: string): ScramUpsertion {
  const m = /^\s*([A-Z0-9-]+)\s*=\s*\[(.*)\]\s*$/s.exec(text);
  if (m === null) throw new Error(`--add-scram: expected MECHANISM=[name=...,password=...], got ${JSON.stringify(text)}`);
  const mechanism = m[1]!;
  if (!isScramMechanism(mechanism)) throw new Error(`--add-scram: unknown mechanism ${mechanism} (SCRAM-SHA-256, SCRAM-SHA-512)`);
  const fields = new Map<string, string>();
  for (const part of m[2]!.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new Error(`--add-scram: expected key=value, got ${JSON.stringify(part)}`);
    fields.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim().replace(/^"(.*)"$/s, '$1'));
  }
  const name = fields.get('name');
  const password = fields.get('password');
  if (name === undefined || name === '') throw new Error('--add-scram: name= is required');
  if (password === undefined) throw new Error('--add-scram: password= is required');
  const iterations = fields.has('iterations') ? Number(fields.get('iterations')) : SCRAM_ITERATIONS_DEFAULT;
  if (!Number.isInteger(iterations)) throw new Error(`--add-scram: iterations must be an integer, got ${fields.get('iterations')}`);
  const salt = fields.has('salt') ? Buffer.from(fields.get('salt')!, 'base64') : undefined;
  return scramUpsertion(name, mechanism, password, iterations, salt);
}

/** The UserScramCredentialRecord of an upsertion. */
export function scramCredentialRecord(u: ScramUpsertion): MetadataRecord {
  const keys = scramKeysFromSaltedPassword(u.mechanism, u.saltedPassword, u.salt, u.iterations);
  return {
    type: MetadataRecordType.UserScramCredentialRecord, version: 0,
    data: { name: u.name, mechanism: SCRAM_MECHANISM_IDS[u.mechanism], salt: u.salt, storedKey: keys.storedKey, serverKey: keys.serverKey, iterations: u.iterations },
  };
}

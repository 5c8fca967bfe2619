// SASL PLAIN (RFC 4616), server and client, with users as Kafka's PlainLoginModule lists them:
// `user_<name>="<password>"` options of the listener's jaas config.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { JaasEntry } from './jaas.js';

export const PLAIN_LOGIN_MODULE = 'org.apache.kafka.common.security.plain.PlainLoginModule';

/** The result of one server step: a principal name, or a failure message for the client. */
export type PlainOutcome = { ok: true; user: string } | { ok: false; message: string };

/** Compares secrets in time that depends on neither their contents nor their lengths. */
export function secretsEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}

/** The users a PlainLoginModule entry lists (user_<name>=password). */
export function plainUsers(entry: JaasEntry): ReadonlyMap<string, string> {
  const users = new Map<string, string>();
  for (const [k, v] of entry.options) if (k.startsWith('user_')) users.set(k.slice('user_'.length), v);
  return users;
}

/** Checks a client's PLAIN message `[authzid] NUL authcid NUL passwd` against `users`. */
export function plainAuthenticate(token: Buffer, users: ReadonlyMap<string, string>): PlainOutcome {
  const text = token.toString('utf8');
  const parts = text.split('\u0000');
  if (parts.length !== 3) return { ok: false, message: 'Invalid SASL/PLAIN response: expected 3 tokens' };
  const [authzid, user, password] = parts as [string, string, string];
  if (user.length === 0) return { ok: false, message: 'Authentication failed: username not specified' };
  if (password.length === 0) return { ok: false, message: 'Authentication failed: password not specified' };
  // An unknown user is compared against a fixed string, so both failures take the same time.
  const expected = users.get(user);
  const match = secretsEqual(password, expected ?? '\u0000unknown-user');
  if (!match || expected === undefined) return { ok: false, message: 'Authentication failed: Invalid username or password' };
  if (authzid.length > 0 && authzid !== user) {
    return { ok: false, message: 'Authentication failed: Client requested an authorization id that is different from username' };
  }
  return { ok: true, user };
}

/** The client's one PLAIN message. */
export function plainClientToken(user: string, password: string): Buffer {
  return Buffer.from(`\u0000${user}\u0000${password}`, 'utf8');
}

// SCRAM credentials (Kafka's ScramControlManager): AlterUserScramCredentials turns upsertions
// (a salted password) and deletions into UserScramCredentialRecord / RemoveUserScramCredentialRecord.
// A user's alterations are all accepted or all refused, with Kafka's codes: UNACCEPTABLE_CREDENTIAL
// (empty name, iterations out of range, empty salt or salted password), UNSUPPORTED_SASL_MECHANISM,
// DUPLICATE_RESOURCE (the same user and mechanism twice in one request), RESOURCE_NOT_FOUND
// (deleting a credential that does not exist).
import {
  ErrorCode, type AlterUserScramCredentialsRequest, type AlterUserScramCredentialsResponse,
} from '../protocol/index.js';
import { MetadataRecordType, scramCredentialFromSaltedPassword, ScramMechanism, type MetadataImage, type MetadataRecord } from '../metadata/index.js';
import { limits } from '../util/index.js';
import type { ControllerResult } from './result.js';

type Refusal = { errorCode: number; errorMessage: string };

const MECHANISMS = new Set<number>([ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512]);

export function alterUserScramCredentials(image: MetadataImage, request: AlterUserScramCredentialsRequest): ControllerResult<AlterUserScramCredentialsResponse> {
  const refused = new Map<string, Refusal>();
  const refuse = (user: string, errorCode: number, errorMessage: string): void => { if (!refused.has(user)) refused.set(user, { errorCode, errorMessage }); };
  const seen = new Set<string>();
  const users: string[] = [];
  const check = (name: string, mechanism: number): void => {
    if (!users.includes(name)) users.push(name);
    if (name.length === 0) refuse(name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not be empty');
    else if (name.length > limits.scramUserNameCharsMax) refuse(name, ErrorCode.UNACCEPTABLE_CREDENTIAL, `Username longer than ${limits.scramUserNameCharsMax} characters`);
    if (!MECHANISMS.has(mechanism)) refuse(name, ErrorCode.UNSUPPORTED_SASL_MECHANISM, 'Unknown SCRAM mechanism');
    const key = `${mechanism}\u0000${name}`;
    if (seen.has(key)) refuse(name, ErrorCode.DUPLICATE_RESOURCE, 'A user credential cannot be altered twice in the same request');
    seen.add(key);
  };
  for (const d of request.deletions) {
    check(d.name, d.mechanism);
    if (MECHANISMS.has(d.mechanism) && image.scram.credential(d.name, d.mechanism) === undefined) {
      refuse(d.name, ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist');
    }
  }
  for (const u of request.upsertions) {
    check(u.name, u.mechanism);
    if (u.iterations < limits.scramIterationsMin) refuse(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, `Too few iterations (minimum ${limits.scramIterationsMin})`);
    else if (u.iterations > limits.scramIterationsMax) refuse(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, `Too many iterations (maximum ${limits.scramIterationsMax})`);
    if (u.salt.length === 0) refuse(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Salt must not be empty');
    if (u.saltedPassword.length === 0) refuse(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Salted password must not be empty');
  }
  const records: MetadataRecord[] = [];
  for (const d of request.deletions) {
    if (refused.has(d.name)) continue;
    records.push({ type: MetadataRecordType.RemoveUserScramCredentialRecord, version: 0, data: { name: d.name, mechanism: d.mechanism } });
  }
  for (const u of request.upsertions) {
    if (refused.has(u.name)) continue;
    const c = scramCredentialFromSaltedPassword(u.mechanism, u.saltedPassword, u.salt, u.iterations);
    records.push({
      type: MetadataRecordType.UserScramCredentialRecord, version: 0,
      data: { name: u.name, mechanism: u.mechanism, salt: Buffer.from(c.salt), storedKey: c.storedKey, serverKey: c.serverKey, iterations: c.iterations },
    });
  }
  const results = users.map((user) => {
    const r = refused.get(user);
    return { user, errorCode: r?.errorCode ?? ErrorCode.NONE, errorMessage: r?.errorMessage ?? null };
  });
  return { records, response: { throttleTimeMs: 0, results } };
}

// AlterUserScramCredentials in the controller: records for accepted users, Kafka's codes for the
// others (a user's alterations are all refused together), and DescribeUserScramCredentials on the
// image those records give.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { alterUserScramCredentials } from '../../src/controller/scram-control.js';
import { MetadataDelta, MetadataImage, MetadataRecordType } from '../../src/metadata/index.js';
import { ErrorCode } from '../../src/protocol/index.js';
import { describeUserScramCredentialsHandler } from '../../src/broker/handlers/50-describe-user-scram-credentials.js';
import { scramUpsertion } from '../../src/security/index.js';

const up = (name: string, mechanism: number, iterations = 4096) => {
  const u = scramUpsertion(name, mechanism === 1 ? 'SCRAM-SHA-256' : 'SCRAM-SHA-512', 'pw', 4096);
  return { name, mechanism, iterations, salt: u.salt, saltedPassword: u.saltedPassword };
};

function apply(image: MetadataImage, records: readonly import('../../src/metadata/index.js').MetadataRecord[]): MetadataImage {
  const delta = new MetadataDelta(image);
  for (const r of records) delta.replay(r);
  return delta.apply(image.provenance);
}

test('upsertions become UserScramCredentialRecords; refused users get Kafka\'s codes and write nothing', () => {
  const r = alterUserScramCredentials(MetadataImage.EMPTY, {
    deletions: [{ name: 'ghost', mechanism: 2 }],
    upsertions: [up('alice', 2), up('alice', 1), up('bob', 2, 100), up('carol', 3), up('', 2), up('dave', 2), up('dave', 2), up('erin', 2, 20_000)],
  });
  const codes = Object.fromEntries(r.response.results.map((x) => [x.user, x.errorCode]));
  assert.deepEqual(codes, {
    ghost: ErrorCode.RESOURCE_NOT_FOUND, alice: ErrorCode.NONE, bob: ErrorCode.UNACCEPTABLE_CREDENTIAL, carol: ErrorCode.UNSUPPORTED_SASL_MECHANISM,
    '': ErrorCode.UNACCEPTABLE_CREDENTIAL, dave: ErrorCode.DUPLICATE_RESOURCE, erin: ErrorCode.UNACCEPTABLE_CREDENTIAL,
  });
  assert.deepEqual(r.records.map((x) => [x.type, (x.data as { name: string }).name]), [[MetadataRecordType.UserScramCredentialRecord, 'alice'], [MetadataRecordType.UserScramCredentialRecord, 'alice']]);
  const image = apply(MetadataImage.EMPTY, r.records);
  const ctx = { services: { scramCredentials: () => image.scram } } as never;
  const all = describeUserScramCredentialsHandler.handle({ users: null }, ctx) as { results: unknown[] };
  assert.deepEqual(all.results, [{ user: 'alice', errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: 1, iterations: 4096 }, { mechanism: 2, iterations: 4096 }] }]);
  const named = describeUserScramCredentialsHandler.handle({ users: [{ name: 'nobody' }, { name: 'alice' }, { name: 'alice' }] }, ctx) as { results: { user: string; errorCode: number }[] };
  assert.deepEqual(named.results.map((x) => [x.user, x.errorCode]), [['nobody', ErrorCode.RESOURCE_NOT_FOUND], ['alice', ErrorCode.DUPLICATE_RESOURCE]]);
  // Deleting an existing credential removes it; the user goes once none is left.
  const del = alterUserScramCredentials(image, { deletions: [{ name: 'alice', mechanism: 1 }, { name: 'alice', mechanism: 2 }], upsertions: [] });
  assert.equal(del.response.results[0]!.errorCode, ErrorCode.NONE);
  assert.equal(apply(image, del.records).scram.users.has('alice'), false);
});

// DescribeUserScramCredentials (key 50), v0.
// The mechanisms and iterations of users' SCRAM credentials, from this broker's metadata image
// (never salts or keys). A null or empty list describes every user that has one; a named user
// without credentials is RESOURCE_NOT_FOUND and one named twice DUPLICATE_RESOURCE, as in Kafka.
import { ErrorCode, type DescribeUserScramCredentialsRequest } from '../../protocol/index.js';
import type { ScramImage } from '../../metadata/index.js';
import type { HandlerSpec } from '../context.js';

export const describeUserScramCredentialsHandler: HandlerSpec<{ scramCredentials(): ScramImage }, 50> = {
  apiKey: 50,
  minVersion: 0,
  maxVersion: 0,
  handle(request: DescribeUserScramCredentialsRequest, ctx) {
    const image = ctx.services.scramCredentials();
    const describe = (user: string) => {
      const creds = image.users.get(user);
      if (creds === undefined) return { user, errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: `Attempt to describe a user credential that does not exist: ${user}`, credentialInfos: [] };
      const credentialInfos = [...creds].sort(([a], [b]) => a - b).map(([mechanism, c]) => ({ mechanism, iterations: c.iterations }));
      return { user, errorCode: ErrorCode.NONE, errorMessage: null, credentialInfos };
    };
    const base = { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null };
    if (request.users === null || request.users.length === 0) return { ...base, results: [...image.users.keys()].sort().map(describe) };
    const count = new Map<string, number>();
    for (const u of request.users) count.set(u.name, (count.get(u.name) ?? 0) + 1);
    const results = [...count].map(([user, n]) => n > 1
      ? { user, errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: 'Cannot describe SCRAM credentials for the same user twice in a single request', credentialInfos: [] }
      : describe(user));
    return { ...base, results };
  },
};

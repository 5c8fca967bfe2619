// SaslAuthenticate (key 36), v0-2.
// One token of the SASL exchange chosen by SaslHandshake v1. A failure answers
// SASL_AUTHENTICATION_FAILED with the mechanism's message and the connection is closed after
// connection.failed.authentication.delay.ms. v1+ carries session_lifetime_ms (KIP-368): how long
// the session lasts before the client must re-authenticate (0: connections.max.reauth.ms is off).
import { ErrorCode, type SaslAuthenticateRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';

export const saslAuthenticateHandler: HandlerSpec<unknown, 36> = {
  apiKey: 36,
  minVersion: 0,
  maxVersion: 2,
  handle(request: SaslAuthenticateRequest, ctx) {
    if (ctx.sasl === undefined) {
      return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, errorMessage: 'SaslAuthenticate on a listener without SASL', authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n };
    }
    return ctx.sasl.authenticate(request.authBytes, ctx.nowMs);
  },
};

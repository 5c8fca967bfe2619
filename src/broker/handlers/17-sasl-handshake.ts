// SaslHandshake (key 17), v0-1.
// Picks the connection's SASL mechanism and lists the listener's sasl.enabled.mechanisms. v0: the
// tokens that follow are raw size-prefixed frames (clients from before KIP-152); v1: they come in
// SaslAuthenticate requests. A mechanism not enabled answers UNSUPPORTED_SASL_MECHANISM and one out
// of order ILLEGAL_SASL_STATE; the network closes the connection after either (Kafka's
// connection.failed.authentication.delay.ms). On a listener without SASL (the connection is
// authenticated by its listener already) it answers ILLEGAL_SASL_STATE, as Kafka does.
import { ErrorCode, type SaslHandshakeRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';

export const saslHandshakeHandler: HandlerSpec<unknown, 17> = {
  apiKey: 17,
  minVersion: 0,
  maxVersion: 1,
  handle(request: SaslHandshakeRequest, ctx) {
    if (ctx.sasl === undefined) return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] };
    return ctx.sasl.handshake(request.mechanism, ctx.apiVersion);
  },
};

// Envelope (key 58), v0, on the controller listener only (KIP-590).
// A broker forwards a client's change to the active controller wrapped with the client's principal
// and address (envelope.ts has the layout). The sender needs CLUSTER_ACTION on the cluster (the
// rule table; refused with CLUSTER_AUTHORIZATION_FAILED as the envelope's error); the inner request
// then runs through the controller's router as if the client had sent it, so it is authorized with
// the client's principal and charged to the client's controller_mutation_rate, and its response
// goes back inside. A missing principal is the sender's own (as a raw request is). An inner request
// that is not a forwarded client change, or that cannot be read, answers INVALID_REQUEST.
import { ErrorCode, type EnvelopeRequest, type EnvelopeResponse } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import { decodeHostAddress, decodePrincipal } from '../envelope.js';

export interface EnvelopeServices {
  /**
   * Runs the inner request (its frame without size prefix) as `principal` from `clientAddress`:
   * the response frame without size prefix, or null when it is refused unread.
   */
  forwarded(requestData: Buffer, principal: string, clientAddress: string): Promise<Buffer | null>;
}

export const envelopeHandler: HandlerSpec<EnvelopeServices, 58> = {
  apiKey: 58,
  minVersion: 0,
  maxVersion: 0,
  async handle(request: EnvelopeRequest, ctx): Promise<EnvelopeResponse> {
    const invalid = { responseData: null, errorCode: ErrorCode.INVALID_REQUEST };
    let principal: string;
    try {
      principal = request.requestPrincipal === null ? ctx.principal : decodePrincipal(request.requestPrincipal);
    } catch {
      return invalid;
    }
    const clientAddress = decodeHostAddress(request.clientHostAddress);
    if (clientAddress === null) return invalid;
    const responseData = await ctx.services.forwarded(request.requestData, principal, clientAddress);
    return responseData === null ? invalid : { responseData, errorCode: ErrorCode.NONE };
  },
};

// DescribeClientQuotas (key 48), v0-1. Answered from this broker's metadata image, as Kafka's
// brokers do: filter components match an entity type by name (EXACT), its default (DEFAULT) or any
// (SPECIFIED); `strict` asks for entities with exactly the filtered types. A bad filter answers
// INVALID_REQUEST (UNSUPPORTED_VERSION for an unknown entity type) with null entries.
import { describeClientQuotas, type ClientQuotasImage } from '../../metadata/index.js';
import type { DescribeClientQuotasRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';

export interface ClientQuotaServices {
  /** The client quotas of the image this broker holds. */
  clientQuotas(): ClientQuotasImage;
}

export const describeClientQuotasHandler: HandlerSpec<ClientQuotaServices, 48> = {
  apiKey: 48,
  minVersion: 0,
  maxVersion: 1,
  handle(request: DescribeClientQuotasRequest, ctx) {
    const out = describeClientQuotas(ctx.services.clientQuotas(), request.components, request.strict);
    if (out.errorCode !== 0) return { throttleTimeMs: 0, errorCode: out.errorCode, errorMessage: 'errorMessage' in out ? out.errorMessage : null, entries: null };
    return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, entries: 'entries' in out ? out.entries : [] };
  },
};

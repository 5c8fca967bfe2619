// AlterClientQuotas (key 49), v0-1. Forwarded to the active controller, which validates each entry
// (entity types user / client-id / ip, defaults as null names, the keys valid for the entity,
// whole numbers for byte rates) and writes ClientQuotaRecords; an entry's error is INVALID_REQUEST
// with Kafka's message. validate_only checks only. Answered once this broker's image holds the
// change, so a DescribeClientQuotas sent here next sees it.
import type { AlterClientQuotasRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import { forwardedFor } from '../envelope.js';
import type { ControllerChannel } from '../controller-channel.js';

export const alterClientQuotasHandler: HandlerSpec<{ controller: ControllerChannel }, 49> = {
  apiKey: 49,
  minVersion: 0,
  maxVersion: 1,
  async handle(request: AlterClientQuotasRequest, ctx) {
    const entries = await ctx.services.controller.alterClientQuotas(request, forwardedFor(ctx));
    return { throttleTimeMs: 0, entries };
  },
};

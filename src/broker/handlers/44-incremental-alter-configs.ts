// IncrementalAlterConfigs (key 44), v0-1. SET, DELETE, APPEND and SUBTRACT (lists only) on topic
// and broker configs; all ops of a resource apply or none do; validate_only checks only.
// Unknown keys, read-only broker keys and bad values answer INVALID_CONFIG with a message.
import type { IncrementalAlterConfigsRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import { forwardedFor } from '../envelope.js';
import type { ConfigAdmin } from '../config-admin.js';

export const incrementalAlterConfigsHandler: HandlerSpec<{ configAdmin: ConfigAdmin }, 44> = {
  apiKey: 44,
  minVersion: 0,
  maxVersion: 1,
  async handle(request: IncrementalAlterConfigsRequest, ctx) {
    const responses = [];
    for (const r of request.resources) {
      const result = await ctx.services.configAdmin.incrementalAlter(r.resourceType, r.resourceName, r.configs, request.validateOnly, forwardedFor(ctx));
      responses.push({ ...result, resourceType: r.resourceType, resourceName: r.resourceName });
    }
    return { throttleTimeMs: 0, responses };
  },
};

// AlterConfigs (key 33), v0-2. Legacy: the configs given replace all dynamic configs of the
// resource (IncrementalAlterConfigs is the one to use). Validated like CreateTopics configs.
import type { AlterConfigsRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import { forwardedFor } from '../envelope.js';
import type { ConfigAdmin } from '../config-admin.js';

export const alterConfigsHandler: HandlerSpec<{ configAdmin: ConfigAdmin }, 33> = {
  apiKey: 33,
  minVersion: 0,
  maxVersion: 2,
  async handle(request: AlterConfigsRequest, ctx) {
    const responses = [];
    for (const r of request.resources) {
      const result = await ctx.services.configAdmin.alter(r.resourceType, r.resourceName, r.configs, request.validateOnly, forwardedFor(ctx));
      responses.push({ ...result, resourceType: r.resourceType, resourceName: r.resourceName });
    }
    return { throttleTimeMs: 0, responses };
  },
};

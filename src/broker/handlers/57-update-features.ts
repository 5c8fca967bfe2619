// UpdateFeatures (key 57), v0-1. Forwarded to the active controller, which finalizes the levels
// asked (all or none: every feature carries the first refusal's error, INVALID_UPDATE_VERSION for a
// level this software or a registered broker does not support, or a downgrade not asked as one).
// metadata.version and kraft.version are not changed here. Turning eligible.leader.replicas.version
// down to 0 clears every ELR, as Kafka does. v0's allowDowngrade is a safe downgrade. Answered once
// this broker's image holds the new levels.
import { ErrorCode, type UpdateFeaturesRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import { forwardedFor } from '../envelope.js';
import type { ControllerChannel } from '../controller-channel.js';

/** UpdateFeatures' upgradeType values. */
const UPGRADE = 1;
const SAFE_DOWNGRADE = 2;

export const updateFeaturesHandler: HandlerSpec<{ controller: ControllerChannel }, 57> = {
  apiKey: 57,
  minVersion: 0,
  maxVersion: 1,
  async handle(request: UpdateFeaturesRequest, ctx) {
    const featureUpdates = request.featureUpdates.map((u) => ({
      ...u, upgradeType: ctx.apiVersion === 0 ? (u.allowDowngrade ? SAFE_DOWNGRADE : UPGRADE) : u.upgradeType,
    }));
    const channel = ctx.services.controller;
    if (channel.updateFeatures === undefined) {
      const errorMessage = 'No controller here takes feature updates.';
      return { throttleTimeMs: 0, errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage, results: featureUpdates.map((u) => ({ feature: u.feature, errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage })) };
    }
    return channel.updateFeatures({ ...request, featureUpdates, validateOnly: ctx.apiVersion >= 1 && request.validateOnly }, forwardedFor(ctx));
  },
};

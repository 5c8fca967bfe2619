// AllocateProducerIds (key 67), v0.
// A broker asks the active controller for a block of producer ids (KIP-730); the controller checks
// the broker epoch (STALE_BROKER_EPOCH) and commits a ProducerIdsRecord before answering, so no
// block is handed out twice. Answered by the controller in this process; NOT_CONTROLLER when it is
// not active.
import type { AllocateProducerIdsRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { ControllerServices } from '../services.js';

export const allocateProducerIdsHandler: HandlerSpec<ControllerServices, 67> = {
  apiKey: 67,
  minVersion: 0,
  maxVersion: 0,
  handle(request: AllocateProducerIdsRequest, ctx) {
    return ctx.services.localController.allocateProducerIds(request);
  },
};

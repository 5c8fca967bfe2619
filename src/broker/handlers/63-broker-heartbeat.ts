// BrokerHeartbeat (key 63), v0-1.
// A registered broker's heartbeat to the active controller: it keeps the broker's session, carries
// its metadata offset (a caught-up broker is unfenced) and its wish to stay fenced or to shut down
// (controlled shutdown: shouldShutDown once its leaderships have moved). Answered by the controller
// in this process; NOT_CONTROLLER when it is not active. v1's offlineLogDirs are not used yet.
import type { BrokerHeartbeatRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { ControllerServices } from '../services.js';

export const brokerHeartbeatHandler: HandlerSpec<ControllerServices, 63> = {
  apiKey: 63,
  minVersion: 0,
  maxVersion: 1,
  handle(request: BrokerHeartbeatRequest, ctx) {
    return ctx.services.localController.brokerHeartbeat(request);
  },
};

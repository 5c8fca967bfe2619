// BrokerRegistration (key 62), v0-4.
// A broker registers with the active controller (KIP-631): the controller in this process answers
// (the broker epoch is the offset of its RegisterBrokerRecord, the broker starts fenced);
// NOT_CONTROLLER when it is not active, so the broker looks for the one that is. v3's
// previousBrokerEpoch is carried but not used yet (Kafka uses it for clean-shutdown detection).
import type { BrokerRegistrationRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { ControllerServices } from '../services.js';

export const brokerRegistrationHandler: HandlerSpec<ControllerServices, 62> = {
  apiKey: 62,
  minVersion: 0,
  maxVersion: 4,
  handle(request: BrokerRegistrationRequest, ctx) {
    return ctx.services.localController.registerBroker(request);
  },
};

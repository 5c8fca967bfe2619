// AlterUserScramCredentials (key 51), v0.
// Upsertions (a salted password, its salt and iterations) and deletions of users' SCRAM
// credentials, decided by the active controller (src/controller/scram-control.ts: its error codes)
// and answered once this broker's image holds the change; forwarded when the controller is on
// another node. NOT_CONTROLLER per user when none was reached.
import type { AlterUserScramCredentialsRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import { forwardedFor } from '../envelope.js';
import type { ControllerChannel } from '../controller-channel.js';

export const alterUserScramCredentialsHandler: HandlerSpec<{ controller: ControllerChannel }, 51> = {
  apiKey: 51,
  minVersion: 0,
  maxVersion: 0,
  handle(request: AlterUserScramCredentialsRequest, ctx) {
    return ctx.services.controller.alterUserScramCredentials(request, forwardedFor(ctx));
  },
};

// ApiVersions (key 18), v0-4.
// Lists exactly the versions the router's handlers implement. A request newer than v4 is answered
// by the router in v0 with UNSUPPORTED_VERSION and the list (KIP-511), so the client can downgrade.
// v3+ validates the client software name and version (INVALID_REQUEST when malformed), as Kafka does.
// Feature negotiation (supported/finalized features) reports metadata.version once the metadata
// image carries it; today both lists are empty.
import { ErrorCode } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';

const SOFTWARE_PATTERN = /^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$/;

export function apiVersionsHandler(supported: () => { apiKey: number; minVersion: number; maxVersion: number }[]): HandlerSpec<unknown, 18> {
  return {
    apiKey: 18,
    minVersion: 0,
    maxVersion: 4,
    handle(request: { clientSoftwareName: string; clientSoftwareVersion: string }, ctx) {
      const apiKeys = supported();
      if (ctx.apiVersion >= 3 && (!SOFTWARE_PATTERN.test(request.clientSoftwareName) || !SOFTWARE_PATTERN.test(request.clientSoftwareVersion))) {
        return { errorCode: ErrorCode.INVALID_REQUEST, apiKeys, throttleTimeMs: 0 };
      }
      return { errorCode: ErrorCode.NONE, apiKeys, throttleTimeMs: 0, supportedFeatures: [], finalizedFeaturesEpoch: -1n, finalizedFeatures: [], zkMigrationReady: false };
    },
  };
}

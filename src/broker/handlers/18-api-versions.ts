// ApiVersions (key 18), v0-4.
// Lists exactly the versions the router's handlers implement. A request newer than v4 is answered
// by the router in v0 with UNSUPPORTED_VERSION and the list (KIP-511), so the client can downgrade.
// v3+ validates the client software name and version (INVALID_REQUEST when malformed), as Kafka does.
// v3+ also carries feature negotiation: the features this software supports (SUPPORTED_FEATURES)
// and the cluster's finalized levels with their epoch (the metadata offset they hold at). A
// supported feature whose minimum is 0 is left out below v4 (KAFKA-17011: older clients refuse a
// minimum of 0). transaction.version is what a client reads to choose transaction version 2.
import { ErrorCode } from '../../protocol/index.js';
import { SUPPORTED_FEATURES } from '../../metadata/index.js';
import type { HandlerSpec } from '../context.js';
import type { FinalizedFeatures } from '../services.js';

const SOFTWARE_PATTERN = /^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$/;
/** The first version whose SupportedFeatures may carry a minimum of 0. */
const FEATURE_MIN_ZERO_VERSION = 4;

export function apiVersionsHandler(supported: () => { apiKey: number; minVersion: number; maxVersion: number }[],
  finalized: () => FinalizedFeatures): HandlerSpec<unknown, 18> {
  return {
    apiKey: 18,
    minVersion: 0,
    maxVersion: 4,
    handle(request: { clientSoftwareName: string; clientSoftwareVersion: string }, ctx) {
      const apiKeys = supported();
      if (ctx.apiVersion >= 3 && (!SOFTWARE_PATTERN.test(request.clientSoftwareName) || !SOFTWARE_PATTERN.test(request.clientSoftwareVersion))) {
        return { errorCode: ErrorCode.INVALID_REQUEST, apiKeys, throttleTimeMs: 0 };
      }
      const supportedFeatures = SUPPORTED_FEATURES.filter((f) => f.minVersion > 0 || ctx.apiVersion >= FEATURE_MIN_ZERO_VERSION)
        .map((f) => ({ name: f.name, minVersion: f.minVersion, maxVersion: f.maxVersion }));
      const features = finalized();
      // Kafka reports a finalized level as a range of one level (min = max).
      const finalizedFeatures = [...features.levels].map(([name, level]) => ({ name, minVersionLevel: level, maxVersionLevel: level }));
      return { errorCode: ErrorCode.NONE, apiKeys, throttleTimeMs: 0, supportedFeatures, finalizedFeaturesEpoch: features.epoch, finalizedFeatures, zkMigrationReady: false };
    },
  };
}

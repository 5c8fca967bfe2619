// DescribeConfigs (key 32), v0-4. Kafka 4.0 dropped v0 (KIP-896); it is kept for older clients: it
// has no synonyms or config sources, only is_default.
// Topics (type 2) and this broker (type 4, by its id; '' for the cluster-wide defaults), with
// sources and, when asked, synonyms (v1+) and documentation (v3+); sensitive values are null.
// Broker loggers (type 8) are not described yet: INVALID_REQUEST.
import type { DescribeConfigsRequest } from '../../protocol/index.js';
import { ConfigSource } from '../../config/index.js';
import type { HandlerSpec } from '../context.js';
import type { ConfigAdmin } from '../config-admin.js';

export const describeConfigsHandler: HandlerSpec<{ configAdmin: ConfigAdmin }, 32> = {
  apiKey: 32,
  minVersion: 0,
  maxVersion: 4,
  handle(request: DescribeConfigsRequest, ctx) {
    return {
      throttleTimeMs: 0,
      results: request.resources.map((r) => {
        const d = ctx.services.configAdmin.describe(r.resourceType, r.resourceName, r.configurationKeys, request.includeSynonyms, ctx.apiVersion >= 3 && request.includeDocumentation);
        return {
          errorCode: d.errorCode, errorMessage: d.errorMessage, resourceType: r.resourceType, resourceName: r.resourceName,
          configs: d.entries.map((e) => ({
            name: e.name, value: e.value, readOnly: e.readOnly, isDefault: e.source === ConfigSource.DEFAULT_CONFIG, configSource: e.source, isSensitive: e.isSensitive,
            synonyms: e.synonyms.map((s) => ({ name: s.name, value: s.value, source: s.source })), configType: e.configType, documentation: e.documentation,
          })),
        };
      }),
    };
  },
};

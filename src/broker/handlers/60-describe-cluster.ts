// DescribeCluster (key 60), v0-1.
// The cluster id, the controller (as brokers see it) and the brokers on this listener. v1's
// endpoint type 2 (controllers) is not served yet: it answers UNSUPPORTED_ENDPOINT_TYPE.
import { ErrorCode, type DescribeClusterRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { MetadataView } from '../services.js';

const ENDPOINT_BROKERS = 1;

export const describeClusterHandler: HandlerSpec<{ metadata(): MetadataView }, 60> = {
  apiKey: 60,
  minVersion: 0,
  maxVersion: 1,
  handle(request: DescribeClusterRequest, ctx) {
    const view = ctx.services.metadata();
    const endpointType = ctx.apiVersion >= 1 ? request.endpointType : ENDPOINT_BROKERS;
    const base = { throttleTimeMs: 0, endpointType, clusterId: view.clusterId, controllerId: view.controllerId, clusterAuthorizedOperations: -2147483648 };
    if (endpointType !== ENDPOINT_BROKERS) {
      return { ...base, errorCode: ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, errorMessage: 'only broker endpoints are described', brokers: [] };
    }
    return {
      ...base, errorCode: 0, errorMessage: null,
      brokers: view.brokers(ctx.listenerName).map((b) => ({ brokerId: b.nodeId, host: b.host, port: b.port, rack: b.rack })),
    };
  },
};

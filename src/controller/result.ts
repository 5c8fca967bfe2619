// What every controller operation returns (Kafka's ControllerResult): the records to append and the
// response to send once they are committed. Its own file so that the managers QuorumController
// calls (acls.ts, client-quotas.ts, scram-control.ts) need not import QuorumController back.
import type { MetadataRecord } from '../metadata/index.js';

export interface ControllerResult<T> {
  readonly records: readonly MetadataRecord[];
  readonly response: T;
}

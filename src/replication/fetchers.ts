// Where a follower gets its data: Kafka's ReplicaFetcherManager, as a port of the replica manager.
// applyDelta removes a partition's fetcher when it becomes leader, is deleted, or follows a new
// leader or leader epoch, and adds one for each partition that now follows a leader. The broker
// plugs in ReplicaFetcherManager (replica-fetcher.ts); NO_REPLICA_FETCHERS is for tests.
import type { Partition } from './partition.js';

export interface ReplicaFetchers {
  /**
   * Starts fetching each partition from its leader (`partition.leaderId`, at `partition.leaderEpoch`,
   * both >= 0) into `partition.log`.
   */
  addFetcherForPartitions(partitions: readonly Partition[]): void;
  /** Stops fetching these partitions (a partition not being fetched is ignored). */
  removeFetcherForPartitions(partitions: readonly Partition[]): void;
}

/** No follower fetches: the broker serves the partitions it leads and nothing else. */
export const NO_REPLICA_FETCHERS: ReplicaFetchers = Object.freeze({
  addFetcherForPartitions(): void {},
  removeFetcherForPartitions(): void {},
});

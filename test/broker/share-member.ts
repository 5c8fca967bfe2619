// A share group member speaking the share APIs itself (ShareGroupHeartbeat, ShareFetch,
// ShareAcknowledge on one partition), for tests that need exact control of what is acquired and
// acknowledged.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { BrokerConnection } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';

export interface Acquired { firstOffset: number; lastOffset: number; deliveryCount: number }

/** One share group member speaking the share APIs itself. */
export class Member {
  readonly memberId = randomUUID();
  private epoch = 0;
  constructor(private readonly c: BrokerConnection, readonly group: string, readonly topic: string, readonly topicId: string) {}

  /** Joins, retrying while the group coordinator loads (up to `timeoutMs`). */
  async join(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await this.c.send(ApiKey.ShareGroupHeartbeat, 1, { groupId: this.group, memberId: this.memberId, memberEpoch: 0, rackId: null, subscribedTopicNames: [this.topic] });
      if (r.errorCode === ErrorCode.NONE) return;
      assert.ok([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR].includes(r.errorCode), `heartbeat error ${r.errorCode}`);
      assert.ok(Date.now() < deadline, `joining ${this.group}: the coordinator still answers ${r.errorCode} after ${timeoutMs} ms`);
      await new Promise((x) => setTimeout(x, 50));
    }
  }

  /** Closes the share session (ShareAcknowledge at the final epoch): what the member holds goes back at once. */
  async close(): Promise<void> {
    const r = await this.c.send(ApiKey.ShareAcknowledge, 1, { groupId: this.group, memberId: this.memberId, shareSessionEpoch: -1, topics: [] });
    assert.equal(r.errorCode, 0);
  }

  async leave(): Promise<void> {
    const r = await this.c.send(ApiKey.ShareGroupHeartbeat, 1, { groupId: this.group, memberId: this.memberId, memberEpoch: -1, rackId: null, subscribedTopicNames: null });
    assert.equal(r.errorCode, 0);
  }

  /** One ShareFetch of partition 0; the acquired offset ranges, or the partition's error code. */
  async fetch(maxWaitMs = 0): Promise<Acquired[] | number> {
    const r = await this.c.send(ApiKey.ShareFetch, 1, {
      groupId: this.group, memberId: this.memberId, shareSessionEpoch: this.epoch, maxWaitMs, minBytes: 1, maxBytes: 1 << 20, maxRecords: 500, batchSize: 500,
      topics: this.epoch === 0 ? [{ topicId: this.topicId, partitions: [{ partitionIndex: 0, partitionMaxBytes: 0, acknowledgementBatches: [] }] }] : [], forgottenTopicsData: [],
    });
    assert.equal(r.errorCode, 0);
    this.epoch++;
    const p = r.responses[0]?.partitions[0];
    if (p === undefined) return [];
    if (p.errorCode !== 0) return p.errorCode;
    return p.acquiredRecords.map((a: any) => ({ firstOffset: Number(a.firstOffset), lastOffset: Number(a.lastOffset), deliveryCount: a.deliveryCount }));
  }

  /** Fetches until some records come (a fenced share-partition answers an error once, then reloads). */
  async fetchSome(): Promise<Acquired[]> {
    for (let i = 0; i < 50; i++) {
      const got = await this.fetch(200);
      if (typeof got !== 'number' && got.length > 0) return got;
    }
    throw new Error('no records');
  }

  async acknowledge(firstOffset: number, lastOffset: number, type: number): Promise<number> {
    const r = await this.c.send(ApiKey.ShareAcknowledge, 1, {
      groupId: this.group, memberId: this.memberId, shareSessionEpoch: this.epoch,
      topics: [{ topicId: this.topicId, partitions: [{ partitionIndex: 0, acknowledgementBatches: [{ firstOffset: BigInt(firstOffset), lastOffset: BigInt(lastOffset), acknowledgeTypes: [type] }] }] }],
    });
    this.epoch++;
    return r.errorCode || r.responses[0].partitions[0].errorCode;
  }
}

export const ACCEPT = 1;
export const RELEASE = 2;
export const REJECT = 3;
export const offsetsOf = (ranges: Acquired[]) => ranges.flatMap((r) => Array.from({ length: r.lastOffset - r.firstOffset + 1 }, (_, i) => r.firstOffset + i));


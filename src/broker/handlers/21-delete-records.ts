// DeleteRecords (key 21), v0-2.
// Moves each partition's log start offset to the given offset (-1: the high watermark);
// offsets past the high watermark answer OFFSET_OUT_OF_RANGE. The low watermark is the new log
// start offset.
import type { DeleteRecordsRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';

export interface DeleteRecordsServices {
  deleteRecords(topic: string, partition: number, offset: bigint): Promise<{ errorCode: number; lowWatermark: bigint }>;
}

export const deleteRecordsHandler: HandlerSpec<DeleteRecordsServices, 21> = {
  apiKey: 21,
  minVersion: 0,
  maxVersion: 2,
  async handle(request: DeleteRecordsRequest, ctx) {
    const topics = await Promise.all(request.topics.map(async (t) => ({
      name: t.name,
      partitions: await Promise.all(t.partitions.map(async (p) => ({
        partitionIndex: p.partitionIndex, ...(await ctx.services.deleteRecords(t.name, p.partitionIndex, p.offset)),
      }))),
    })));
    return { throttleTimeMs: 0, topics };
  },
};

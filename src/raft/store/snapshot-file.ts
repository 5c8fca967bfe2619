// Kafka's snapshot file format (RecordsSnapshotWriter): record batches whose offsets count from 0
// and whose partitionLeaderEpoch is the snapshot's epoch. First a control batch with the
// SnapshotHeaderRecord (control type 3) and, when the snapshot knows its voter set (KIP-853), a
// KRaftVersionRecord (5) and the VotersRecord (6); then the state machine's own record batches;
// last a control batch with the SnapshotFooterRecord (4).
//
// The core keeps a snapshot as [voter set][state machine bytes] (voters.ts); this file turns that
// into Kafka's layout and back. It is for state machines whose snapshot bytes are v2 record batches
// (the cluster metadata): their batches are copied with baseOffset and partitionLeaderEpoch
// rewritten in place (both lie outside the CRC).
import { decodeFromBuffer, encodeToBuffer } from '../../protocol/index.js';
import { buildRecordBatchSync, iterateBatches, iterateRecords, parseControlRecordType } from '../../records/index.js';
import { decodeVoters, encodeVoters, unwrapSnapshotData, wrapSnapshotData, KRAFT_VERSION_RECONFIG, type VoterSet } from '../core/voters.js';
import type { Snapshot, SnapshotId } from '../core/types.js';

const SNAPSHOT_HEADER = 3;
const SNAPSHOT_FOOTER = 4;
const KRAFT_VERSION = 5;
const KRAFT_VOTERS = 6;

function controlKey(type: number): Buffer {
  const key = Buffer.alloc(4);
  key.writeInt16BE(0, 0);
  key.writeInt16BE(type, 2);
  return key;
}

export class SnapshotFormatError extends Error {
  override name = 'SnapshotFormatError';
}

/**
 * The file's bytes for a snapshot whose state machine bytes are record batches.
 * `lastContainedLogTimestampMs`: the append time of the last entry it covers (-1 when unknown).
 */
export function encodeSnapshotFile(s: Snapshot, lastContainedLogTimestampMs = -1): Buffer {
  const { voters, data } = unwrapSnapshotData(s.data);
  const epoch = s.id.epoch;
  const header = [{
    key: controlKey(SNAPSHOT_HEADER),
    value: encodeToBuffer('SnapshotHeaderRecord', 0, { version: 0, lastContainedLogTimestamp: BigInt(lastContainedLogTimestampMs) }),
  }];
  if (voters !== undefined) {
    header.push({ key: controlKey(KRAFT_VERSION), value: encodeToBuffer('KRaftVersionRecord', 0, { version: 0, kRaftVersion: KRAFT_VERSION_RECONFIG }) });
    header.push({ key: controlKey(KRAFT_VOTERS), value: Buffer.from(encodeVoters(voters)) });
  }
  const parts: Buffer[] = [buildRecordBatchSync({ records: header, baseOffset: 0, partitionLeaderEpoch: epoch, isControl: true, baseTimestamp: -1 })];
  let next = header.length;
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  for (const v of iterateBatches(body)) {
    if (v.isControl) throw new SnapshotFormatError('a state machine snapshot holds a control batch');
    const copy = Buffer.from(v.bytes());
    copy.writeBigInt64BE(BigInt(next), 0);
    copy.writeInt32BE(epoch, 12);
    parts.push(copy);
    next += v.recordCount;
  }
  parts.push(buildRecordBatchSync({
    records: [{ key: controlKey(SNAPSHOT_FOOTER), value: encodeToBuffer('SnapshotFooterRecord', 0, { version: 0 }) }],
    baseOffset: next, partitionLeaderEpoch: epoch, isControl: true, baseTimestamp: -1,
  }));
  return Buffer.concat(parts);
}

/** Back to the core's form: the voter set (if the file has one) around the state machine's batches. */
export function decodeSnapshotFile(id: SnapshotId, bytes: Buffer): Uint8Array {
  let voters: VoterSet | undefined;
  let header = false;
  let footer = false;
  const data: Buffer[] = [];
  for (const v of iterateBatches(bytes)) {
    if (!v.verifyCrc()) throw new SnapshotFormatError(`snapshot ${id.endOffset}-${id.epoch}: batch at ${v.baseOffset} fails its CRC`);
    if (footer) throw new SnapshotFormatError(`snapshot ${id.endOffset}-${id.epoch}: batches after the footer`);
    if (!v.isControl) {
      if (!header) throw new SnapshotFormatError(`snapshot ${id.endOffset}-${id.epoch}: records before the header`);
      data.push(v.bytes());
      continue;
    }
    for (const r of iterateRecords(v, v.bytes().subarray(61))) {
      const type = parseControlRecordType(r.key);
      if (type === 'SNAPSHOT_HEADER') {
        decodeFromBuffer('SnapshotHeaderRecord', 0, r.value!);
        header = true;
      } else if (type === 'SNAPSHOT_FOOTER') {
        footer = true;
      } else if (type === 'KRAFT_VOTERS') {
        voters = decodeVoters(r.value!);
      }
    }
  }
  if (!header || !footer) throw new SnapshotFormatError(`snapshot ${id.endOffset}-${id.epoch}: no ${header ? 'footer' : 'header'} (torn or not Kafka's format)`);
  const body = new Uint8Array(Buffer.concat(data));
  return voters === undefined ? body : wrapSnapshotData(voters, body);
}

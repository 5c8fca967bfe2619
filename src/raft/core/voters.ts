// KIP-853 voter sets: who votes, and where they listen. The set in force is the latest VotersRecord
// in the log (committed or not, as KRaft does: a leader counts the new set as soon as it appends
// it), else the one recorded in the latest snapshot, else the static bootstrap set from the
// configuration. A truncation that cuts a VotersRecord brings the previous set back.
//
// VotersRecord values use Kafka's schema (VotersRecord v0, in a control record of type
// KRAFT_VOTERS = 6); the codec is the generated one (pure, no I/O). Directory ids are the zero
// UUID (this quorum has no directory ids) and every voter supports kraft.version 0..1.
import { ZERO_UUID, decodeFromBuffer, encodeToBuffer, type VotersRecord } from '../../protocol/index.js';
import { assert } from '../../util/index.js';
import type { NodeId } from './types.js';

export interface Voter {
  readonly id: NodeId;
  /** Where it listens for Raft RPCs (the CONTROLLER endpoint); unknown for a static set given by id only. */
  readonly host?: string;
  readonly port?: number;
}

export type VoterSet = readonly Voter[];

export const CONTROLLER_LISTENER = 'CONTROLLER';
/** kraft.version with reconfiguration (KIP-853). */
export const KRAFT_VERSION_RECONFIG = 1;

export function voterIds(set: VoterSet): NodeId[] {
  return set.map((v) => v.id);
}

export function sortedVoters(set: VoterSet): VoterSet {
  return [...set].sort((a, b) => a.id - b.id);
}

export function encodeVoters(set: VoterSet): Uint8Array {
  const record: VotersRecord = {
    version: 0,
    voters: sortedVoters(set).map((v) => ({
      voterId: v.id, voterDirectoryId: ZERO_UUID,
      endpoints: v.host === undefined || v.port === undefined ? [] : [{ name: CONTROLLER_LISTENER, host: v.host, port: v.port }],
      kRaftVersionFeature: { minSupportedVersion: 0, maxSupportedVersion: KRAFT_VERSION_RECONFIG },
    })),
  };
  return encodeToBuffer('VotersRecord', 0, record);
}

export function decodeVoters(value: Uint8Array): VoterSet {
  const buf = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  const record = decodeFromBuffer<VotersRecord>('VotersRecord', 0, buf);
  const out: Voter[] = [];
  for (const v of record.voters) {
    const ep = v.endpoints.find((e) => e.name === CONTROLLER_LISTENER) ?? v.endpoints[0];
    out.push(ep === undefined ? { id: v.voterId } : { id: v.voterId, host: ep.host, port: ep.port });
  }
  assert(new Set(out.map((v) => v.id)).size === out.length, 'a VotersRecord names a voter twice');
  return out;
}

/** Two sets differ by at most one voter added or removed (the only change KIP-853 makes at a time). */
export function differByOne(a: VoterSet, b: VoterSet): boolean {
  const ai = new Set(voterIds(a));
  const bi = new Set(voterIds(b));
  let diff = 0;
  for (const id of ai) if (!bi.has(id)) diff++;
  for (const id of bi) if (!ai.has(id)) diff++;
  return diff <= 1;
}

// ---- Snapshots carry the voter set ---------------------------------------------------------------

/**
 * A snapshot's bytes are [magic][u32 length][VotersRecord][state machine bytes], so a node that
 * loads or fetches a snapshot knows the voters as of its end offset (Kafka puts the VotersRecord in
 * the snapshot's control records for the same reason). Snapshots without the magic (written before
 * voter sets existed) carry no set.
 */
const SNAPSHOT_MAGIC = [0x00, 0x4c, 0x56, 0x01] as const;

export function wrapSnapshotData(voters: VoterSet, data: Uint8Array): Uint8Array {
  const encoded = encodeVoters(voters);
  const out = new Uint8Array(8 + encoded.length + data.length);
  out.set(SNAPSHOT_MAGIC, 0);
  new DataView(out.buffer).setUint32(4, encoded.length);
  out.set(encoded, 8);
  out.set(data, 8 + encoded.length);
  return out;
}

export function unwrapSnapshotData(bytes: Uint8Array): { voters: VoterSet | undefined; data: Uint8Array } {
  const magic = bytes.length >= 8 && SNAPSHOT_MAGIC.every((b, i) => bytes[i] === b);
  if (!magic) return { voters: undefined, data: bytes };
  const length = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(4);
  assert(8 + length <= bytes.length, 'snapshot voter set runs past its end');
  return { voters: decodeVoters(bytes.subarray(8, 8 + length)), data: bytes.subarray(8 + length) };
}

// The active-controller seat: the pure part of a controller driver, shared by the server's driver
// (src/node/controller-service.ts, on the metadata log's RaftDriver) and the controller-on-Raft
// simulation, so both decide leadership the same way. It decides, from this node's place in the
// metadata quorum, when a QuorumController is active: on the Raft leader once its log up to its
// LeaderChange entry is applied (the epoch start is committed, so the committed image holds every
// record an earlier leader committed), built on that committed image. Leadership lost, or an append
// that did not land where its records were replayed, ends the activation; the next one starts over
// from the committed image, which is what Kafka's deactivate (revert to the committed state) gives.
// Proposing, waiting for commits and timers are the driver's.
import type { MetadataImage, MetadataRecord } from '../metadata/index.js';
import { assert } from '../util/index.js';
import type { QuorumController } from './quorum-controller.js';

/** This node's place in the metadata quorum (RaftDriver's view; `appliedOffset` is the next offset to apply). */
export interface QuorumLeadership {
  readonly isLeader: boolean;
  readonly epoch: number;
  readonly leaderId: number | undefined;
  readonly logEndOffset: number;
  readonly appliedOffset: number;
}

export interface Activation {
  readonly controller: QuorumController;
  /** The Raft epoch this activation writes in. */
  readonly epoch: number;
}

/** What one leadership check changed. */
export interface SeatChange {
  /** The activation in force after the check, if any. */
  readonly active: Activation | null;
  /** The activation this check ended (leadership lost or moved to a new epoch). */
  readonly resigned: Activation | null;
  /** The check started `active`; `bootstrap` holds the records that open a new cluster's log. */
  readonly activated: boolean;
  readonly bootstrap: readonly MetadataRecord[];
}

export class ControllerSeat {
  private activeValue: Activation | null = null;

  /** `make` builds a controller on a committed image (the options are the driver's). */
  constructor(private readonly make: (image: MetadataImage) => QuorumController) {}

  get active(): Activation | null { return this.activeValue; }

  /**
   * Activates or resigns as the quorum says. `committedImage` is the image of everything this node
   * applied; it is read only when activating.
   */
  check(l: QuorumLeadership, committedImage: MetadataImage, nowMs: number): SeatChange {
    let resigned: Activation | null = null;
    if (this.activeValue !== null && (!l.isLeader || l.epoch !== this.activeValue.epoch)) resigned = this.resign();
    let activated = false;
    let bootstrap: readonly MetadataRecord[] = [];
    if (this.activeValue === null && l.isLeader && l.appliedOffset >= l.logEndOffset) {
      const controller = this.make(committedImage);
      controller.activate(l.logEndOffset, nowMs);
      this.activeValue = { controller, epoch: l.epoch };
      activated = true;
      // A new cluster's log opens with its feature levels; a log that predates them keeps none
      // (transaction.version 0), as an upgraded Kafka does.
      if (committedImage.isEmpty) bootstrap = controller.bootstrap().records;
    }
    return { active: this.activeValue, resigned, activated, bootstrap };
  }

  /**
   * Replays an operation's records at the next write offset, before they are proposed, so the next
   * operation sees them. Returns the offset the proposal must land at.
   */
  stage(a: Activation, records: readonly MetadataRecord[]): number {
    assert(a === this.activeValue, 'staging records on an activation that ended');
    const baseOffset = a.controller.nextWriteOffset;
    a.controller.replayBatch(records, baseOffset, a.epoch);
    return baseOffset;
  }

  /**
   * The proposal of records staged at `stagedOffset` was appended at (`baseOffset`, `epoch`). Anything
   * else than where they were replayed means something else was appended in between: the replayed
   * state is not the log's, so the activation ends. Returns whether it stands.
   */
  landed(a: Activation, stagedOffset: number, got: { baseOffset: number; epoch: number }): boolean {
    if (got.baseOffset === stagedOffset && got.epoch === a.epoch) return true;
    if (this.activeValue === a) this.resign();
    return false;
  }

  /** Records up to `offset` are committed and applied: the controller may forget older states. */
  committed(offset: number): void {
    this.activeValue?.controller.commit(offset);
  }

  /** Ends the activation (leadership lost, a failed proposal, shutdown); returns it, if there was one. */
  resign(): Activation | null {
    const a = this.activeValue;
    if (a === null) return null;
    this.activeValue = null;
    a.controller.deactivate();
    return a;
  }
}

// A cluster link's periodic job against this (the target) cluster, run by one node per link: the
// group offset sync and the topic sync. One loop per job, woken early only by stop(); a failed
// round is logged once per distinct message and drops its target client, so the next round starts
// with fresh connections.
import { ClusterClient, type ClusterClientOptions } from '../client/index.js';
import type { Logger } from '../util/index.js';

export abstract class LinkBackgroundTask {
  protected stopped = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private target: ClusterClient | null = null;

  constructor(
    protected readonly link: string,
    protected readonly source: ClusterClient,
    private readonly targetOptions: ClusterClientOptions,
    protected readonly logger: Logger,
    /** What the job is, for its log lines ("topic sync"), and its client id's suffix. */
    private readonly job: { name: string; clientSuffix: string },
  ) {}

  start(): void { this.loop ??= this.run(); }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    this.target?.close();
  }

  /** How long between rounds. */
  protected abstract tickMs(): number;
  /** One round; a throw is logged and the next round runs after tickMs as usual. */
  protected abstract round(): Promise<void>;

  /** The client to this cluster, made on first use in a round. */
  protected targetClient(): ClusterClient {
    this.target ??= new ClusterClient({ ...this.targetOptions, clientId: `logline-link-${this.link}-${this.job.clientSuffix}`, retries: 0 });
    return this.target;
  }

  private async run(): Promise<void> {
    let lastError = '';
    while (!this.stopped) {
      try {
        await this.round();
        lastError = '';
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        if (message !== lastError) this.logger.warn(`link ${this.link}: ${this.job.name}: ${message}`);
        lastError = message;
        this.target?.close();
        this.target = null;
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => { this.wake = null; resolve(); }, this.tickMs());
        this.wake = () => { clearTimeout(t); this.wake = null; resolve(); };
      });
    }
  }
}

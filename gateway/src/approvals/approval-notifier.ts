// approvals.notify_url: each new approval is POSTed there once as {approval, console_url}, retried on a 5xx or a network
// error with backoff, each attempt under a timeout. It runs beside the hold and never delays it.
import type { Approval } from '../contract/index.js';

export interface NotifierOptions {
  url: string;
  /** Where a person opens the approval in the console. */
  consoleUrl: (id: string) => string;
  /** Attempts in all (default 4: the first and three retries). */
  attempts?: number;
  /** The first retry's delay; each next one doubles it (default 500 ms). */
  backoffMs?: number;
  /** One attempt's deadline (default 5 s). */
  timeoutMs?: number;
  log?: { warn: (obj: object, msg: string) => void };
}

export class ApprovalNotifier {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly opts: NotifierOptions) {}

  /** Sends in the background. */
  notify(approval: Approval): void {
    const p = this.send(approval).finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  private async send(approval: Approval): Promise<void> {
    const attempts = this.opts.attempts ?? 4;
    const body = JSON.stringify({ approval, console_url: this.opts.consoleUrl(approval.id) });
    let delay = this.opts.backoffMs ?? 500;
    let last = '';
    for (let n = 1; n <= attempts; n++) {
      try {
        const res = await fetch(this.opts.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': 'agentgw-approvals' },
          body,
          signal: AbortSignal.timeout(this.opts.timeoutMs ?? 5000),
        });
        await res.arrayBuffer().catch(() => undefined);
        if (res.status < 500) {
          if (res.status >= 400) this.opts.log?.warn({ approval_id: approval.id, status: res.status }, 'approvals.notify_url refused the approval notice');
          return;
        }
        last = `HTTP ${res.status}`;
      } catch (e) {
        last = (e as Error).name === 'TimeoutError' ? 'timed out' : ((e as Error).message ?? String(e));
      }
      if (n < attempts) {
        await new Promise((r) => setTimeout(r, delay).unref());
        delay *= 2;
      }
    }
    this.opts.log?.warn({ approval_id: approval.id, error: last }, 'approvals.notify_url could not be told of an approval');
  }

  /** Waits for notices still being sent (tests, shutdown). */
  async drain(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }
}

// Telling approvers a call waits for them. A notice carries the console link, the tool, the agent
// and a summary of the arguments with secrets redacted; never a secret value.
import type { ControlPlane } from '../control-plane/control-plane.js';
import { errorText } from '../errors.js';
import type { Log } from '../log.js';
import type { GatewayMetrics } from '../metrics.js';
import { type HiddenSecret, shownArgumentsJson } from '../secret-pointers.js';
import { escapeInvisible } from '../text/invisible.js';

export interface HeldCallNotice {
  readonly execution_id: string;
  readonly tool: string;
  readonly agent_id: string;
  readonly customer_id: string | null;
  /** The staff group that decides, or null when only the customer confirms. */
  readonly staff_group: string | null;
  readonly customer_confirms: boolean;
  /** The canonical arguments with secrets redacted, shortened. */
  readonly summary: string;
  readonly console_url: string;
  readonly expires_at: string;
  /**
   * How many staff approvals the call still needs before it runs (its quorum less those given; 0
   * when only the customer confirms): a group told again after one approval of two reads 1.
   */
  readonly approvals_needed: number;
  /** The group the call was escalated to, when this notice tells that group; null otherwise. */
  readonly escalated_to: string | null;
}

/** Who decides, as a chat line says it: the group and how many of its approvals are still needed. */
const deciders = (notice: HeldCallNotice): string => {
  if (notice.staff_group === null) return 'the customer';
  const needed = notice.approvals_needed;
  return needed > 1 ? `group ${notice.staff_group} (${needed} approvals needed)` : `group ${notice.staff_group}`;
};

export interface Notifier {
  heldCall(notice: HeldCallNotice): Promise<void>;
}

/** Notifies every channel; a channel that fails is logged and never loses the call. */
export class Notifiers implements Notifier {
  constructor(
    private readonly channels: readonly Notifier[],
    private readonly log: Log,
    private readonly metrics: Pick<GatewayMetrics, 'notificationFailed'> | null = null,
  ) {}

  async heldCall(notice: HeldCallNotice): Promise<void> {
    await Promise.all(
      this.channels.map(async (channel) => {
        try {
          await channel.heldCall(notice);
        } catch (error) {
          this.metrics?.notificationFailed();
          this.log.warn('a notification channel failed', {
            execution_id: notice.execution_id,
            error: errorText(error),
          });
        }
      }),
    );
  }
}

/** The log line every held call gets (locally, the console's inbox lists it too). */
export class LogNotifier implements Notifier {
  constructor(private readonly log: Log) {}

  async heldCall(notice: HeldCallNotice): Promise<void> {
    this.log.info('call waiting for approval', { ...notice });
  }
}

/** A webhook: the notice as JSON, with a Slack-style `text` line for chat channels when asked. */
export class WebhookNotifier implements Notifier {
  constructor(
    private readonly url: string,
    private readonly text: boolean,
    private readonly timeoutMs = 5_000,
  ) {}

  async heldCall(notice: HeldCallNotice): Promise<void> {
    const who = deciders(notice);
    const response = await fetch(this.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(this.timeoutMs),
      body: JSON.stringify({
        type: 'approval.requested',
        ...notice,
        ...(this.text
          ? { text: `${notice.agent_id} wants to run ${notice.tool}; ${who} decides: ${notice.console_url}` }
          : {}),
      }),
    });
    await response.body?.cancel();
    // The URL is never part of a message: webhook URLs usually carry a token.
    if (!response.ok) throw new Error(`a webhook answered HTTP ${response.status}`);
  }
}

/** The webhooks the configuration names now (so an edit applies to the next notice). */
export class ConfiguredWebhooks implements Notifier {
  constructor(
    private readonly controlPlane: ControlPlane,
    private readonly log: Log,
    private readonly metrics: Pick<GatewayMetrics, 'notificationFailed'> | null = null,
  ) {}

  async heldCall(notice: HeldCallNotice): Promise<void> {
    const webhooks = (await this.controlPlane.current()).snapshot?.config.settings.notifications.webhooks ?? [];
    await new Notifiers(
      webhooks.map((webhook) => new WebhookNotifier(webhook.url, webhook.text)),
      this.log,
      this.metrics,
    ).heldCall(notice);
  }
}

/** How long a summary may be in a notice. */
const summaryLength = 500;

/**
 * The arguments as people read them in a notice: a hidden secret as "[REDACTED]" and a value that
 * only reads so escaped (shared/secret-pointers.ts), invisible characters as \u escapes.
 */
export const summarize = (argumentsJson: string | null, hidden: HiddenSecret = () => true): string => {
  const text = escapeInvisible(argumentsJson === null ? '{}' : shownArgumentsJson(argumentsJson, hidden));
  return text.length > summaryLength ? `${text.slice(0, summaryLength - 1)}…` : text;
};

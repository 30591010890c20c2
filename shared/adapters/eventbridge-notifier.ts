// Held-call notices as EventBridge events on the gateway's bus, for whatever the organization
// routes them to (mail, chat, tickets).
import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { HeldCallNotice, Notifier } from '../approvals/notifier.js';

export class EventBridgeNotifier implements Notifier {
  constructor(
    private readonly client: EventBridgeClient,
    private readonly busName: string,
  ) {}

  async heldCall(notice: HeldCallNotice): Promise<void> {
    const { FailedEntryCount } = await this.client.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: this.busName,
            Source: 'approval-gateway',
            DetailType: 'Approval requested',
            Detail: JSON.stringify(notice),
          },
        ],
      }),
    );
    if ((FailedEntryCount ?? 0) > 0) throw new Error('EventBridge refused the notice');
  }
}

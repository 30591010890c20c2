// Held-call notices as EventBridge events on the gateway's bus, for whatever the organization
// routes them to (mail, chat, tickets). The SDK's module is loaded on the first notice.
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { HeldCallNotice, Notifier } from '../approvals/notifier.js';
import { type ClientSource, clientOf, onFirstUse } from './on-first-use.js';

const eventBridge = onFirstUse(() => import('./sdk/eventbridge.js'));

/** The default client, in the function's own region, made on first use. */
export const defaultEventBridgeClient = onFirstUse(async () => new (await eventBridge()).EventBridgeClient({}));

export class EventBridgeNotifier implements Notifier {
  constructor(
    private readonly client: ClientSource<EventBridgeClient>,
    private readonly busName: string,
  ) {}

  async heldCall(notice: HeldCallNotice): Promise<void> {
    const [client, { PutEventsCommand }] = await Promise.all([clientOf(this.client), eventBridge()]);
    const { FailedEntryCount } = await client.send(
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

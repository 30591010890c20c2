// A local EventBridge endpoint: PutEvents over the AWS JSON 1.1 protocol, signed with the
// endpoint's credential (SigV4, checked as the other local endpoints do), onto buses made in
// memory. What is put is kept, so a test reads the notices a function sent.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import * as z from 'zod';
import { awsJsonHandler, type LocalAwsCredentials, newLocalAwsCredentials, parseAwsJson } from './aws-signature.js';
import { listen } from './net.js';

interface LocalEvent {
  readonly bus: string;
  readonly source: string;
  readonly detailType: string;
  readonly detail: unknown;
}

export interface LocalEventBridge {
  readonly endpoint: string;
  readonly credentials: LocalAwsCredentials;
  /** Makes a bus (PutEvents onto another name fails that entry, as EventBridge does). */
  createBus(name: string): void;
  /** The events put so far, oldest first. */
  readonly events: readonly LocalEvent[];
  close(): Promise<void>;
}

const PutEvents = z.object({
  Entries: z
    .array(
      z.object({
        EventBusName: z.string().min(1).default('default'),
        Source: z.string().min(1),
        DetailType: z.string().min(1),
        Detail: z.string(),
      }),
    )
    .min(1)
    .max(10),
});

/** The bus a name or ARN means (an entry may name its bus either way). */
const busName = (nameOrArn: string): string =>
  nameOrArn.startsWith('arn:') ? (nameOrArn.split('/').at(-1) ?? '') : nameOrArn;

export const startLocalEventBridge = async (
  options: { credentials?: LocalAwsCredentials } = {},
): Promise<LocalEventBridge> => {
  const credentials = options.credentials ?? newLocalAwsCredentials();
  const buses = new Set<string>(['default']);
  const events: LocalEvent[] = [];

  const putEvents = (body: unknown) => {
    const entries = parseAwsJson(PutEvents, body).Entries.map((entry) => {
      const bus = busName(entry.EventBusName);
      if (!buses.has(bus))
        return { ErrorCode: 'ResourceNotFoundException', ErrorMessage: `Event bus ${bus} does not exist.` };
      let detail: unknown;
      try {
        detail = JSON.parse(entry.Detail);
      } catch {
        return { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is not valid JSON.' };
      }
      events.push({ bus, source: entry.Source, detailType: entry.DetailType, detail });
      return { EventId: randomUUID() };
    });
    const failed = entries.filter((entry) => 'ErrorCode' in entry).length;
    return { FailedEntryCount: failed, Entries: entries };
  };

  const server = createServer(
    awsJsonHandler({
      credentials,
      targetPrefix: 'AWSEvents.',
      contentType: 'application/x-amz-json-1.1',
      name: 'EventBridge',
      actions: { PutEvents: putEvents },
    }),
  );
  const listening = await listen(server, '127.0.0.1', 0);
  return {
    endpoint: `http://127.0.0.1:${listening.port}`,
    credentials,
    createBus: (name) => buses.add(name),
    events,
    close: () => listening.close(),
  };
};

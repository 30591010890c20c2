// A local EventBridge endpoint: PutEvents over the AWS JSON 1.1 protocol, signed with the
// endpoint's credential (SigV4, checked as the other local endpoints do), onto buses made in
// memory. What is put is kept, so a test reads the notices a function sent.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import * as z from 'zod';
import {
  BodyTooLargeError,
  isSignedBy,
  type LocalAwsCredentials,
  newLocalAwsCredentials,
  readRequestBody,
  refuseUnsigned,
} from './aws-signature.js';
import { listen } from './net.js';

export interface LocalEvent {
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

const sendJson = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(body));
};
const sendError = (response: ServerResponse, status: number, type: string, message: string) => {
  response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-errortype': type });
  response.end(JSON.stringify({ __type: type, message }));
};

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
    const parsed = PutEvents.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return { ok: false as const, message: `${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid request'}` };
    }
    const entries = parsed.data.Entries.map((entry) => {
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
    return { ok: true as const, body: { FailedEntryCount: failed, Entries: entries } };
  };

  const answer = async (request: IncomingMessage, response: ServerResponse) => {
    const raw = await readRequestBody(request, 1024 * 1024);
    if (!(await isSignedBy(credentials, request, raw))) {
      refuseUnsigned(response);
      return;
    }
    const target = String(request.headers['x-amz-target'] ?? '');
    if (target !== 'AWSEvents.PutEvents') {
      sendError(response, 400, 'UnknownOperationException', `This local EventBridge does not answer ${target}.`);
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      sendError(response, 400, 'SerializationException', 'The request body is not JSON.');
      return;
    }
    const result = putEvents(body);
    if (result.ok) sendJson(response, 200, result.body);
    else sendError(response, 400, 'ValidationException', result.message);
  };

  const server = createServer((request, response) => {
    answer(request, response).catch((error: unknown) => {
      if (response.headersSent) response.destroy();
      else if (error instanceof BodyTooLargeError)
        sendError(response, 413, 'ValidationException', 'The request is larger than 1 MB.');
      else sendError(response, 500, 'InternalException', 'Internal error.');
    });
  });
  const listening = await listen(server, '127.0.0.1', 0);
  return {
    endpoint: `http://127.0.0.1:${listening.port}`,
    credentials,
    createBus: (name) => buses.add(name),
    events,
    close: () => listening.close(),
  };
};

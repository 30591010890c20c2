// The HTTP POST transport of /tool/call-tool: a request admitted, then the params as its body (JSON,
// capped and awaited as the WebSocket's message is) and the frame as the answer.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentIdentity } from '../../shared/auth/agent.js';
import {
  maxChannelParamsBytes,
  paramsMissingFrame,
  paramsTooLargeFrame,
  postedParamsRefusal,
} from '../../shared/edge/call-tool/serve.js';
import { type ChannelAdmission, headerValue, jsonAnswer } from './call-tool-admission.js';
import { readCappedBody } from './request-body.js';

interface PostTransportParts {
  /** How long a request may take to send its params. */
  readonly waitMs: number;
  readonly admitRequest: (request: IncomingMessage, boundUrl: string) => Promise<ChannelAdmission>;
  /** Runs the params as the agent and gives the frame to answer. */
  readonly answer: (agent: AgentIdentity, bytes: Buffer, traceparent: string | null) => Promise<Uint8Array>;
  readonly stopping: () => boolean;
}

const frameAnswer = (status: number, frame: Uint8Array): Response =>
  new Response(new Uint8Array(frame), {
    status,
    headers: { 'content-type': 'application/octet-stream', 'cache-control': 'no-store' },
  });

const writeAnswer = async (response: ServerResponse, answer: Response, close: boolean): Promise<void> => {
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    headers[name] = value;
  });
  if (close) headers.connection = 'close';
  const body = Buffer.from(await answer.arrayBuffer());
  response.writeHead(answer.status, headers).end(body);
};

/** Answers a POST on the channel's path; `boundUrl` is the front's own address. */
export const postTransport =
  (parts: PostTransportParts) =>
  async (request: IncomingMessage, response: ServerResponse, boundUrl: string): Promise<void> => {
    if ((request.method ?? '').toUpperCase() !== 'POST') {
      const notPost = jsonAnswer(405, 'Method Not Allowed: send the params with POST.', { allow: 'POST' });
      await writeAnswer(response, notPost, true);
      return;
    }
    const admission = await parts.admitRequest(request, boundUrl);
    if (admission.kind === 'refused') {
      await writeAnswer(response, admission.answer, true);
      return;
    }
    const unfit = postedParamsRefusal(request.headers['content-type']);
    if (unfit !== null) {
      await writeAnswer(response, frameAnswer(415, unfit), true);
      return;
    }
    const body = await readCappedBody(request, maxChannelParamsBytes, parts.waitMs);
    if (body.kind === 'failed') return;
    if (body.kind !== 'read') {
      // Answer, then drop the connection rather than read the rest of the upload.
      response.once('finish', () => request.destroy());
      const answer =
        body.kind === 'too_large'
          ? frameAnswer(413, paramsTooLargeFrame())
          : frameAnswer(408, paramsMissingFrame(parts.waitMs));
      await writeAnswer(response, answer, true);
      return;
    }
    const frame = await parts.answer(admission.agent, body.bytes, headerValue(request.headers.traceparent));
    await writeAnswer(response, frameAnswer(200, frame), parts.stopping());
  };

// The local fronts of /tool/call-tool: a WebSocket (call-tool-websocket.ts) and an HTTP POST
// (call-tool-post.ts) over one admission step (call-tool-admission.ts: Host, Origin, bearer token,
// as /mcp checks them). Both count against the same per-agent gate as /mcp and hand the params to
// the channel's use-case (shared/edge/call-tool/serve.ts); a stop lets their calls in flight answer.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AgentIdentity } from '../../shared/auth/agent.js';
import { answerChannelBytes, type ChannelAnswer, channelParamsWaitMs } from '../../shared/edge/call-tool/serve.js';
import { errorText } from '../../shared/errors.js';
import type { RequestGate } from '../../shared/limits/request-gate.js';
import type { Log } from '../../shared/log.js';
import { admitChannelRequest, type ChannelAdmissionOptions } from './call-tool-admission.js';
import { postTransport } from './call-tool-post.js';
import { createWebSocketTransport } from './call-tool-websocket.js';

export const callToolPath = '/tool/call-tool';

/** The longest a call may run before a stop stops waiting for it (as /mcp's function timeout). */
const callTimeoutMs = 30_000;

export interface CallToolFrontOptions extends ChannelAdmissionOptions {
  /** The per-agent gate /mcp counts against: the channel's calls count there too. */
  readonly gate: RequestGate;
  readonly log: Log;
  /** How long a connection may stay open without its params. @default channelParamsWaitMs (10 s) */
  readonly paramsWaitMs?: number;
}

export interface CallToolFront {
  readonly path: string;
  readonly timeoutMs: number;
  /** Answers an HTTP request on the path; `boundUrl` is the front's own address. */
  handleRequest(request: IncomingMessage, response: ServerResponse, boundUrl: string): Promise<void>;
  /** Takes (or refuses) an upgrade request on the path. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, boundUrl: string): void;
  /** Takes nothing new, closes connections still waiting for their params (1001), lets calls in flight answer. */
  drain(): Promise<void>;
  /** Drains, then ends every connection left. */
  close(): Promise<void>;
}

type Transport = 'websocket' | 'http';

/** The channel's calls, whichever transport brought them: each run, logged in one line, and tracked for a stop. */
const channelCalls = (options: CallToolFrontOptions) => {
  const inflight = new Set<Promise<void>>();
  /** One line per call: who, which tool, how it ended; never its arguments. */
  const logCall = (agent: AgentIdentity, transport: Transport, answer: ChannelAnswer, startedAt: number) =>
    options.log.info('tools/call over /tool/call-tool', {
      agent_id: agent.id,
      transport,
      tool: answer.tool,
      ...answer.outcome,
      duration_ms: Date.now() - startedAt,
    });
  return {
    answer:
      (transport: Transport) =>
      async (agent: AgentIdentity, bytes: Buffer, traceparent: string | null): Promise<Uint8Array> => {
        const startedAt = Date.now();
        const answer = await answerChannelBytes(
          options.services,
          { gate: options.gate },
          { agent, bytes, traceparent },
        );
        logCall(agent, transport, answer, startedAt);
        return answer.frame;
      },
    track: (work: Promise<void>) => {
      const tracked = work.catch((error: unknown) =>
        options.log.warn('a /tool/call-tool call failed', {
          error: errorText(error),
        }),
      );
      inflight.add(tracked);
      void tracked.finally(() => inflight.delete(tracked));
    },
    /** Waits for the calls in flight, up to the call timeout. */
    settled: async () => {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...inflight]),
        new Promise((resolve) => {
          timer = setTimeout(resolve, callTimeoutMs);
        }),
      ]);
      clearTimeout(timer);
    },
  };
};

export const createCallToolFront = (options: CallToolFrontOptions): CallToolFront => {
  const waitMs = options.paramsWaitMs ?? channelParamsWaitMs;
  let stopping = false;
  const calls = channelCalls(options);
  const admitRequest = (request: IncomingMessage, boundUrl: string) => admitChannelRequest(request, boundUrl, options);
  const websocket = createWebSocketTransport({
    services: options.services,
    log: options.log,
    waitMs,
    admitRequest,
    answer: calls.answer('websocket'),
    track: calls.track,
    stopping: () => stopping,
  });
  const drain = async () => {
    stopping = true;
    websocket.closeWaiting();
    await calls.settled();
  };
  return {
    path: callToolPath,
    timeoutMs: callTimeoutMs,
    handleRequest: postTransport({ waitMs, admitRequest, answer: calls.answer('http'), stopping: () => stopping }),
    handleUpgrade: websocket.handleUpgrade,
    drain,
    close: async () => {
      await drain();
      await websocket.close();
    },
  };
};

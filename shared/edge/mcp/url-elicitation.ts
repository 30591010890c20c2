// The customer's step handed over the standard way to clients that declare URL-mode elicitation:
// 2026-07-28 answers `input_required` with one URL-mode `elicitation/create` and a sealed
// requestState (multi round-trip requests); 2025-11-25 answers the URL-elicitation-required error
// (-32042). Either way the call is recorded and held first, and the client's retry answers that
// same call once the record shows the customer's step is over (shared/use-cases/customer-handover.ts).
import {
  CLIENT_CAPABILITIES_META_KEY,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
  UrlElicitationRequiredError,
} from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { Execution } from '../../executions/execution.js';
import type { Sealer } from '../../sealing.js';
import { sealRequestState } from './request-state.js';

/** The key of the one input request, in inputRequests and in the retry's inputResponses. */
const customerInputKey = 'customer_confirmation';

/** What the client shows the user beside the link. */
const handoverMessage =
  'A request made for you needs your confirmation. Open the link, sign in and confirm or decline it; then continue here.';

// Elicitation optional: capabilities without it (most clients' every request) parse without a
// failure, which costs zod ten times a success; the answer is the same (no URL mode).
const UrlMode = z.looseObject({ elicitation: z.looseObject({ url: z.unknown() }).optional() });
const Envelope = z.looseObject({ [CLIENT_CAPABILITIES_META_KEY]: UrlMode });

/** 2026-07-28: whether this request's client capabilities declare URL-mode elicitation. */
export const declaresUrlElicitation2026 = (ctx: ServerContext): boolean =>
  envelopeDeclaresUrlElicitation(ctx.mcpReq.envelope);

/** The same, of a request's per-request envelope (its params._meta) as sent. */
export const envelopeDeclaresUrlElicitation = (envelope: unknown): boolean => {
  const declared = Envelope.safeParse(envelope);
  return declared.success && declared.data[CLIENT_CAPABILITIES_META_KEY].elicitation?.url !== undefined;
};

/** 2025-11-25: whether the client's initialize capabilities (however the transport knows them) declare it. */
export const declaresUrlElicitation2025 = (capabilities: unknown): boolean => {
  const declared = UrlMode.safeParse(capabilities);
  return declared.success && declared.data.elicitation?.url !== undefined;
};

/** A held call the customer still has to answer, with the link and the expiry a handover needs. */
export interface CustomerStep {
  readonly execution: Execution;
  readonly approvalUrl: string;
  readonly expiresAt: string;
}

export const customerStepOf = (execution: Execution): CustomerStep | null =>
  execution.status === 'pending_approval' &&
  execution.decision?.step?.customer === true &&
  execution.customer_confirmed_at === null &&
  execution.approval_url !== null &&
  execution.expires_at !== null
    ? { execution, approvalUrl: execution.approval_url, expiresAt: execution.expires_at }
    : null;

/** 2026-07-28: the input_required answer, its requestState sealed for this agent and this call. */
export const inputRequiredFor = async (sealer: Sealer, step: CustomerStep): Promise<InputRequiredResult> => {
  const { execution } = step;
  return inputRequired({
    inputRequests: {
      [customerInputKey]: inputRequired.elicitUrl({ message: handoverMessage, url: step.approvalUrl }),
    },
    requestState: await sealRequestState(sealer, {
      agent_id: execution.agent_id,
      execution_id: execution.execution_id,
      tool: execution.tool,
      arguments_hash: execution.arguments_hash ?? '',
      expires_at: step.expiresAt,
    }),
  });
};

/**
 * 2025-11-25: the URL-elicitation-required error. The elicitation id is the execution id: the
 * client may show it, and a later notifications/elicitation/complete would name it.
 */
export const urlElicitationRequired = (step: CustomerStep): UrlElicitationRequiredError =>
  new UrlElicitationRequiredError(
    [
      {
        mode: 'url',
        message: handoverMessage,
        url: step.approvalUrl,
        elicitationId: step.execution.execution_id,
      },
    ],
    'This call waits for the customer: open the URL, and call again once they have answered.',
  );

/** Whether the client reports that the user declined or dismissed the link (then it gets the plain result). */
export const userWithdrew = (responses: Record<string, unknown> | undefined): boolean => {
  const view = inputResponse(responses, customerInputKey);
  return view.kind === 'elicit' && view.action !== 'accept';
};

/** The SDK's own answer to a requestState it refuses (the verify hook's frozen -32602). */
export const invalidRequestState = (): ProtocolError =>
  new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid or expired requestState', {
    reason: 'invalid_request_state',
  });

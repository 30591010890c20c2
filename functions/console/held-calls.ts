// The pages of one held call: the call page (only the group the policy named sees the arguments)
// and the decision, a POST carrying the session's CSRF token and the hash of the arguments shown;
// a GET never decides (mail scanners and chat previews open links).
import type { Logger } from '@aws-lambda-powertools/logger';
import {
  consolePaths,
  executionPage,
  type Flash,
  messagePage,
  refusalMessages,
} from '../../shared/edge/console/pages.js';
import {
  type DecisionDeps,
  type DecisionRefusal,
  decide,
  type HeldCallView,
  mayDecide,
  viewHeldCall,
} from '../../shared/use-cases/approver-decisions.js';
import type { HttpResult } from '../commons/middleware.js';
import type { ApproverRequest } from './request.js';
import { type Handler, type Matched, notAllowed, type Route } from './router.js';

/** Outcomes shown after the redirect that follows a decision (a fixed list: nothing reflected). */
const doneFlashes = new Map<string, Flash>([
  ['approved', { kind: 'ok', text: 'Approved. The call runs now, once, with these arguments.' }],
  ['rejected', { kind: 'ok', text: 'Rejected. Nothing ran; the agent was told.' }],
  ['recorded', { kind: 'ok', text: 'Approval recorded. The call runs once enough approvers have approved it.' }],
]);

const refusalStatus: Record<DecisionRefusal, number> = {
  not_found: 404,
  not_an_approver: 403,
  own_call: 403,
  already_approved: 409,
  sign_in_again: 403,
  acr_not_met: 403,
  already_decided: 409,
  expired: 409,
  arguments_changed: 409,
  customer_confirms: 409,
  invalid_note: 400,
};

const uuidLike = '(?<id>[0-9a-fA-F-]{36})';
const callPath = new RegExp(`^/console/executions/${uuidLike}$`);
const decisionPath = new RegExp(`^/console/executions/${uuidLike}/decision$`);

type ShownCall = Extract<HeldCallView, { kind: 'shown' }>;
type CallHandler = (
  request: ApproverRequest,
  call: ShownCall,
  executionId: string,
  matched: Matched,
) => Promise<HttpResult>;

const forbidden = (request: ApproverRequest, text: string): HttpResult =>
  request.page(403, messagePage(request.context, 'Refused', text));

export const heldCallRoutes = (services: DecisionDeps, logger: Logger): readonly Route[] => {
  /** The call comes first, whatever the method: who may not see it learns nothing more. */
  const withCall =
    (handler: CallHandler): Handler<ApproverRequest> =>
    async (request, matched) => {
      const executionId = (matched.params.id ?? '').toLowerCase();
      const shown = await viewHeldCall(services, request.approver, executionId);
      if (shown.kind === 'refused') {
        // Only the group the policy named (and not the requester) sees the arguments.
        return shown.reason === 'not_found'
          ? request.page(404, messagePage(request.context, 'Not found', 'There is no such call.'))
          : forbidden(request, refusalMessages.not_an_approver);
      }
      return handler(request, shown, executionId, matched);
    };

  const show = withCall(async (request, { execution, refusal, recent }) => {
    const flash = doneFlashes.get(request.query.get('done') ?? '') ?? null;
    return request.page(200, executionPage(request.context, { execution, refusal, flash, recent }));
  });

  const decideCall = withCall(async (request, { execution, refusal }, executionId) => {
    const { approver, context } = request;
    const fields = request.form();
    if (fields === null)
      return request.page(415, messagePage(context, 'Refused', 'The decision must be sent by the console form.'));
    if (!request.fromThisConsole(fields, request.session.csrf)) {
      logger.warn('decision refused: CSRF check failed', { execution_id: executionId, approver: approver.id });
      return forbidden(
        request,
        'The form did not come from this console: your browser must say it was sent from here (its Origin or Sec-Fetch-Site header) and carry the page’s security token. Nothing was changed; open the call again and decide with its buttons.',
      );
    }
    const outcome = fields.get('outcome');
    if (outcome !== 'approve' && outcome !== 'reject') {
      const flash: Flash = { kind: 'error', text: 'Choose approve or reject.' };
      return request.page(400, executionPage(context, { execution, refusal, flash }));
    }
    const result = await decide(services, approver, {
      execution_id: executionId,
      outcome,
      arguments_hash: fields.get('arguments_hash') ?? '',
      note: fields.get('note'),
    });
    if (result.kind !== 'refused') {
      const done = result.kind === 'approval_recorded' ? 'recorded' : result.execution.status;
      return request.redirect(`${consolePaths.execution(executionId)}?done=${done}`);
    }
    logger.info('decision refused', { execution_id: executionId, approver: approver.id, reason: result.reason });
    const current = result.execution ?? execution;
    return request.page(
      refusalStatus[result.reason],
      executionPage(context, {
        execution: current,
        refusal: mayDecide(approver, current, services.clock.now()),
        flash: { kind: 'error', text: refusalMessages[result.reason] },
      }),
    );
  });

  const refuse = (text: string) => withCall(async (request, _call, _id, matched) => notAllowed(text)(request, matched));

  return [
    {
      access: 'approver',
      path: callPath,
      methods: { GET: show, HEAD: show },
      otherwise: refuse('Decide with the buttons on this page.'),
    },
    {
      access: 'approver',
      path: decisionPath,
      methods: { POST: decideCall },
      otherwise: refuse('A decision is made with the buttons on the call page, never by opening a link.'),
    },
  ];
};

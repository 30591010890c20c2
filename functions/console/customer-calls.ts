// The customer's pages of one call: the call page (only the customer the agent acts for, signed in
// for this call) and the answer, a POST carrying the session's CSRF token and the hash of the
// arguments shown; a GET never decides. After an answer the customer's session ends.
import type { Logger } from '@aws-lambda-powertools/logger';
import {
  type Answered,
  answeredMessages,
  type CustomerPageContext,
  customerCallPage,
  customerMessagePage,
  customerRefusalMessages,
} from '../../shared/edge/console/customer-pages.js';
import { customerPaths } from '../../shared/edge/console/paths.js';
import type { Execution } from '../../shared/executions/execution.js';
import type { DecisionDeps } from '../../shared/use-cases/approver-decisions.js';
import {
  type CustomerAnswer,
  type CustomerRefusal,
  customerAnswer,
  viewCustomerCall,
} from '../../shared/use-cases/customer-decisions.js';
import type { HttpResult } from '../commons/middleware.js';
import type { CustomerRequest } from './customer-request.js';
import type { CustomerSignIn } from './customer-sign-in.js';
import type { ConsoleRequest } from './request.js';
import type { Handler, Route } from './router.js';

const refusalStatus: Record<CustomerRefusal, number> = {
  not_found: 404,
  not_waiting_for_customer: 409,
  already_decided: 409,
  expired: 409,
  arguments_changed: 409,
};

const refusalTitles: Record<CustomerRefusal, string> = {
  not_found: 'Not found',
  not_waiting_for_customer: 'Nothing to confirm',
  already_decided: 'Already decided',
  expired: 'Too late to confirm',
  arguments_changed: 'Nothing was changed',
};

const uuidLike = '(?<id>[0-9a-fA-F-]{36})';
const callPath = new RegExp(`^/customer/calls/${uuidLike}$`);
const answerPath = new RegExp(`^/customer/calls/${uuidLike}/answer$`);
/** Everything else under /customer. */
const anyCustomerPath = /^\/customer(\/.*)?$/;

const nobody = (request: ConsoleRequest): CustomerPageContext => ({ customer: null, now: request.now() });

const refused = (request: ConsoleRequest, context: CustomerPageContext, reason: CustomerRefusal): HttpResult =>
  request.page(
    refusalStatus[reason],
    customerMessagePage(context, refusalTitles[reason], customerRefusalMessages[reason], 'error'),
  );

const notAllowed =
  (text: string): Handler<CustomerRequest> =>
  async (request, { allow }) =>
    request.page(405, customerMessagePage(request.context, 'Not allowed', text, 'error'), { headers: { allow } });

/** The customer's pages when this deployment has no customer sign-in: every one says so (503). */
const notConfigured: Handler<ConsoleRequest> = async (request) =>
  request.page(
    503,
    customerMessagePage(
      nobody(request),
      'Not available',
      'Customer sign-in is not configured for this deployment, so requests cannot be confirmed here yet. Nothing was changed; tell the organization that sent you the link.',
      'error',
    ),
  );

const answeredTexts = new Map<string, string>(Object.entries(answeredMessages));

/** After an answer: what happens next, chosen from a fixed list by the query (nothing reflected). */
const answered: Handler<ConsoleRequest> = async (request) => {
  const text = answeredTexts.get(request.query.get('outcome') ?? '');
  if (text === undefined) return noSuchPage(request);
  return request.page(200, customerMessagePage(nobody(request), 'Thank you', text, 'ok'));
};

const noSuchPage = async (request: ConsoleRequest): Promise<HttpResult> =>
  request.page(404, customerMessagePage(nobody(request), 'Not found', 'There is no such page.', 'error'));

/** The page of one call, to its customer only, with the buttons that answer it. */
const showCall =
  (services: DecisionDeps): Handler<CustomerRequest> =>
  async (request, { params }) => {
    const shown = await viewCustomerCall(services, request.customer, (params.id ?? '').toLowerCase());
    if (shown.kind === 'refused') return refused(request, request.context, shown.reason);
    if (shown.refusal !== null) return refused(request, request.context, shown.refusal);
    return request.page(
      200,
      customerCallPage(request.context, { execution: shown.execution, csrf: request.session.csrf, error: null }),
    );
  };

/** An answer taken: the session ends with it (the next call needs a new sign-in), then what happens next. */
const answeredRedirect = async (
  request: CustomerRequest,
  outcome: CustomerAnswer['outcome'],
  execution: Execution,
): Promise<HttpResult> => {
  const next: Answered =
    outcome === 'decline' ? 'declined' : execution.status === 'pending_approval' ? 'waits' : 'runs';
  return request.redirect(`${customerPaths.answered}?outcome=${next}`, [await request.cookies.end(request.session)]);
};

/** An answer refused: changed arguments show the request as held now, to check again; anything else says why, alone. */
const answerRefused = (
  request: CustomerRequest,
  reason: CustomerRefusal,
  execution: Execution | undefined,
): HttpResult => {
  if (reason === 'arguments_changed' && execution !== undefined) {
    return request.page(
      409,
      customerCallPage(request.context, {
        execution,
        csrf: request.session.csrf,
        error: customerRefusalMessages.arguments_changed,
      }),
    );
  }
  return refused(request, request.context, reason);
};

/** The customer's answer: a form from this page (its CSRF token and origin), confirm or decline. */
const answerCall =
  (services: DecisionDeps, logger: Logger): Handler<CustomerRequest> =>
  async (request, { params }) => {
    const { customer, context } = request;
    const executionId = (params.id ?? '').toLowerCase();
    const fields = request.form();
    if (fields === null) {
      return request.page(
        415,
        customerMessagePage(context, 'Refused', 'Answer with the buttons on the page.', 'error'),
      );
    }
    if (!request.fromThisConsole(fields, request.session.csrf)) {
      logger.warn('customer answer refused: CSRF check failed', { execution_id: executionId, customer: customer.id });
      return request.page(
        403,
        customerMessagePage(
          context,
          'Refused',
          'The answer did not come from this page: your browser must say it was sent from here (its Origin or Sec-Fetch-Site header) and carry the page’s security token. Nothing was changed; open the page again and answer with its buttons.',
          'error',
        ),
      );
    }
    const outcome = fields.get('outcome');
    if (outcome !== 'confirm' && outcome !== 'decline') {
      return request.page(400, customerMessagePage(context, 'Refused', 'Choose Confirm or Decline.', 'error'));
    }
    const result = await customerAnswer(services, customer, {
      execution_id: executionId,
      outcome,
      arguments_hash: fields.get('arguments_hash') ?? '',
    });
    if (result.kind === 'answered') return answeredRedirect(request, outcome, result.execution);
    logger.info('customer answer refused', { execution_id: executionId, customer: customer.id, reason: result.reason });
    return answerRefused(request, result.reason, result.execution);
  };

export const customerRoutes = (
  services: DecisionDeps,
  logger: Logger,
  signIn: CustomerSignIn | null,
): readonly Route[] => {
  if (signIn === null) return [{ access: 'static', path: anyCustomerPath, methods: {}, otherwise: notConfigured }];
  const show = showCall(services);
  return [
    ...signIn.routes,
    {
      access: 'customer',
      path: callPath,
      methods: { GET: show, HEAD: show },
      otherwise: notAllowed('Answer with the buttons on this page.'),
    },
    {
      access: 'customer',
      path: answerPath,
      methods: { POST: answerCall(services, logger) },
      otherwise: notAllowed('An answer is given with the buttons on the request page, never by opening a link.'),
    },
    { access: 'static', path: customerPaths.answered, methods: { GET: answered, HEAD: answered } },
    { access: 'static', path: anyCustomerPath, methods: {}, otherwise: noSuchPage },
  ];
};

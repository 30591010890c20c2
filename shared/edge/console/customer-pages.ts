// The customer's pages: sign in (again, for this one call), read exactly what the agent asked to do
// for them, and confirm or decline it. Same stylesheet, escaping and argument table as the console,
// in words for someone who is not staff, and no link into the staff console.
import type { Customer } from '../../approvals/approver.js';
import { isJsonObject } from '../../catalog/tool.js';
import type { Execution } from '../../executions/execution.js';
import { hiddenSecretsOf } from '../../secret-pointers.js';
import type { CustomerRefusal } from '../../use-cases/customer-decisions.js';
import { parseExactJson } from '../../wire/exact-json.js';
import { argumentsTable, argumentValue, visibleText } from './arguments-view.js';
import { documentPage, passwordSignInForm } from './document.js';
import { type Html, html } from './html.js';
import { timeLeft } from './pages.js';
import { customerPaths } from './paths.js';

export interface CustomerPageContext {
  /** Who is signed in for this page, if anyone. */
  readonly customer: Customer | null;
  readonly now: number;
}

const layout = (context: CustomerPageContext, title: string, body: Html): string =>
  documentPage(
    title,
    html`<span class="brand">Approval Gateway</span>
  ${context.customer === null ? '' : html`<span class="who">Signed in as ${context.customer.name ?? context.customer.id}</span>`}`,
    body,
  );

/**
 * A short label for a tool from its name alone (the record keeps no description): the system key
 * dropped, the rest in words. `erp.refunds.create` → "Refunds: create".
 */
const toolLabel = (tool: string): string => {
  const words = (part: string) => part.replace(/[_-]+/g, ' ').trim();
  const parts = tool
    .split('.')
    .slice(1)
    .map(words)
    .filter((part) => part !== '');
  const last = parts.pop();
  if (last === undefined) return words(tool);
  const label = parts.length === 0 ? last : `${parts.join(' ')}: ${last}`;
  return label.charAt(0).toUpperCase() + label.slice(1);
};

/** The call's `amount` (with its `currency` when there is one), as shown in the arguments; null without one. */
const amountOf = (execution: Execution): Html | null => {
  if (execution.arguments_json === null) return null;
  const args = parseExactJson(execution.arguments_json);
  if (!isJsonObject(args) || !Object.hasOwn(args, 'amount')) return null;
  const hidden = hiddenSecretsOf(execution);
  const currency = args.currency;
  const shownCurrency = typeof currency === 'string' && !hidden('/currency', currency) ? currency : null;
  return html`${argumentValue(args.amount, hidden('/amount', args.amount))}${shownCurrency === null ? '' : html` ${visibleText(shownCurrency)}`}`;
};

export const customerRefusalMessages: Record<CustomerRefusal, string> = {
  not_found: 'There is no such request for you. Check that you signed in as the customer the link was meant for.',
  not_waiting_for_customer:
    'This request does not wait for your confirmation: you have answered it already, or it never needed your answer. Nothing was changed.',
  already_decided: 'This request was already decided; nothing was changed.',
  expired: 'The time to confirm this request ran out; nothing ran.',
  arguments_changed:
    'The details you answered are not the ones held; nothing was changed. Open the link again and check them.',
};

/** What happens after an answer, shown once it is recorded (a fixed list: nothing is reflected). */
export const answeredMessages = {
  runs: 'Confirmed. The call runs now, once, exactly as you were shown it.',
  waits: "Confirmed. It now waits for the organization's approval; it runs only if they approve it.",
  declined: 'Declined. Nothing ran; the agent will be told.',
} as const;
export type Answered = keyof typeof answeredMessages;

export interface CustomerCallView {
  readonly execution: Execution;
  /** The customer session's CSRF token, for the answer form. */
  readonly csrf: string;
  /** A refusal of an answer just sent, shown above the request. */
  readonly error: string | null;
}

/** The request as its customer reads it, with Confirm and Decline (a POST, never a link). */
export const customerCallPage = (context: CustomerPageContext, view: CustomerCallView): string => {
  const { execution } = view;
  const expiresAt = Date.parse(execution.expires_at ?? execution.created_at);
  const amount = amountOf(execution);
  const thenStaff = (execution.decision?.step?.staff ?? null) !== null;
  return layout(
    context,
    'Confirm a request',
    html`<h1>Confirm a request made for you</h1>
${view.error === null ? '' : html`<p class="flash error" role="alert">${view.error}</p>`}
<p>The agent acting for you asks for this. Check every detail: nothing happens unless you confirm.</p>
<dl class="facts">
<dt>Request</dt><dd>${toolLabel(execution.tool)} <span class="muted">(<code>${execution.tool}</code>)</span></dd>
${amount === null ? '' : html`<dt>Amount</dt><dd>${amount}</dd>`}
<dt>Asked by</dt><dd>the agent <span class="muted">(${execution.agent_id})</span></dd>
<dt>Time left</dt><dd>${timeLeft(expiresAt - context.now)}</dd>
<dt>If you confirm</dt><dd>${thenStaff ? 'The organization then approves or rejects it; it runs only if they approve.' : 'It runs at once, once, exactly as shown.'}</dd>
</dl>
<h2>Exactly what will be sent</h2>
${argumentsTable(execution)}
<p class="muted">Secret values are hidden here and sent as given. Fingerprint <code>${(execution.arguments_hash ?? '').slice(0, 16)}</code>.</p>
<form class="decision" method="post" action="${customerPaths.answer(execution.execution_id)}">
<input type="hidden" name="csrf" value="${view.csrf}">
<input type="hidden" name="arguments_hash" value="${execution.arguments_hash}">
<div class="buttons">
<button type="submit" name="outcome" value="confirm" class="approve">Confirm</button>
<button type="submit" name="outcome" value="decline" class="reject">Decline</button>
</div>
</form>`,
  );
};

export const customerSignInPage = (
  context: CustomerPageContext,
  options: { readonly csrf: string; readonly next: string; readonly error: string | null },
): string =>
  layout(
    context,
    'Sign in',
    html`<h1>Sign in to see the request</h1>
<p>To make sure it is you, sign in every time you open a request. You stay signed in for this request only, until you answer it.</p>
${options.error === null ? '' : html`<p class="flash error" role="alert">${options.error}</p>`}
${passwordSignInForm({ action: customerPaths.signIn, csrf: options.csrf, next: options.next, idName: 'customer', idLabel: 'Customer id' })}`,
  );

export const customerMessagePage = (
  context: CustomerPageContext,
  title: string,
  text: string,
  kind: 'ok' | 'error' | null = null,
): string =>
  layout(
    context,
    title,
    html`<h1>${title}</h1>${kind === null ? html`<p>${text}</p>` : html`<p class="flash ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${text}</p>`}`,
  );

// The console's pages. Plain server-rendered HTML with one stylesheet and no script at all, so the
// strict Content-Security-Policy costs nothing; every value is escaped by `html`.
import type { Approver } from '../../approvals/approver.js';
import { escalatesAt, escalationGroupOf } from '../../approvals/escalation.js';
import { approvalsNeeded } from '../../approvals/quorum.js';
import type { Execution } from '../../executions/execution.js';
import type { DecisionRefusal, RecentCall } from '../../use-cases/approver-decisions.js';
import { maxNoteLength } from '../../use-cases/approver-decisions.js';
import { argumentsTable, visibleText } from './arguments-view.js';
import { documentPage, passwordSignInForm } from './document.js';
import { type Html, html } from './html.js';
import { consolePaths } from './paths.js';

export { visibleText } from './arguments-view.js';
export { consolePaths } from './paths.js';

export interface PageContext {
  readonly approver: Approver | null;
  /** The session's CSRF token, for the forms on the page. */
  readonly csrf: string | null;
  readonly now: number;
}

const layout = (context: PageContext, title: string, body: Html): string =>
  documentPage(
    title,
    html`<a class="brand" href="${consolePaths.home}">Approval Gateway</a>
  ${
    context.approver === null || context.csrf === null
      ? ''
      : html`<form class="who" method="post" action="${consolePaths.signOut}">
    <span>${context.approver.name ?? context.approver.id}</span>
    <span class="groups">${context.approver.groups.join(', ') || 'no groups'}</span>
    <input type="hidden" name="csrf" value="${context.csrf}">
    <button type="submit" class="link">Sign out</button>
  </form>`
  }`,
    body,
  );

/** A duration for people: "2 h 05 min", "4 min 10 s", "12 s". */
export const timeLeft = (ms: number): string => {
  if (ms <= 0) return 'none';
  const seconds = Math.floor(ms / 1000);
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3_600);
  const minutes = Math.floor((seconds % 3_600) / 60);
  if (days > 0) return `${days} d ${hours} h`;
  if (hours > 0) return `${hours} h ${String(minutes).padStart(2, '0')} min`;
  if (minutes > 0) return `${minutes} min ${String(seconds % 60).padStart(2, '0')} s`;
  return `${seconds} s`;
};

const when = (iso: string | null): Html =>
  iso === null ? html`—` : html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}</time>`;

const statusWords: Record<Execution['status'], string> = {
  pending_approval: 'Waiting for a decision',
  approved: 'Approved, running',
  succeeded: 'Approved and done',
  failed: 'Approved, but the system refused or failed',
  unknown: 'Approved and sent, outcome unknown',
  rejected: 'Rejected',
  expired: 'Expired (nobody decided in time)',
  denied: 'Denied by policy',
};

export const refusalMessages: Record<DecisionRefusal, string> = {
  not_found: 'There is no such call.',
  not_an_approver: 'You are not an approver of the group this call waits for.',
  own_call: 'You cannot decide a call you made yourself.',
  already_approved: 'You approved this call already; it waits for another approver.',
  sign_in_again:
    'This call asks for a recent sign-in, and yours is older than its policy allows: sign in again, then decide.',
  acr_not_met:
    'This call asks for a stronger sign-in than the one you used (its policy names the sign-in methods that may decide it); sign in with one of them to decide.',
  already_decided: 'This call was decided already; nothing was changed.',
  expired: 'The approval time ran out before your decision; nothing ran.',
  arguments_changed: 'The arguments you were shown are not the ones held; nothing was changed. Review the page again.',
  customer_confirms:
    'The customer has not confirmed this call yet: it can be approved once they have, and rejected at any time.',
  invalid_note: `The reason must be at most ${maxNoteLength} characters.`,
};

export type Flash = { readonly kind: 'ok' | 'error'; readonly text: string } | null;

const flashBox = (flash: Flash): Html =>
  flash === null
    ? html``
    : html`<p class="flash ${flash.kind}" role="${flash.kind === 'error' ? 'alert' : 'status'}">${flash.text}</p>`;

const policyNames = (execution: Execution): Html => {
  const determining = execution.decision?.determining ?? [];
  if (determining.length === 0) return html`—`;
  return html`${determining.map(
    (policy, index) =>
      html`${index > 0 ? ', ' : ''}<code>${policy.name}</code> <span class="muted">(${policy.file}:${policy.line})</span>`,
  )}`;
};

const waitsFor = (execution: Execution): string => {
  const step = execution.decision?.step;
  if (step === null || step === undefined) return '—';
  const parts = [step.staff === null ? null : `group ${step.staff}`, step.customer ? 'the customer' : null];
  return parts.filter((part) => part !== null).join(' and ');
};

/**
 * A quorum's progress: how many of the approvals it asks are given, and who gave each, when (and
 * as which group, when they decided as the escalation group). Nothing for a call one approver decides.
 */
const approvalsFact = (execution: Execution): Html | string => {
  const step = execution.decision?.step;
  if (step === null || step === undefined || step.staff === null || step.quorum <= 1) return '';
  const given = execution.approvals;
  const who =
    given.length === 0
      ? ''
      : html`: ${given.map(
          (approval, index) =>
            html`${index > 0 ? '; ' : ''}${approval.by}${approval.group === step.staff ? '' : html` (for ${approval.group})`}, ${when(approval.at)}`,
        )}`;
  return html`<dt>Approvals</dt><dd>${given.length} of ${step.quorum} approvals${who}</dd>`;
};

export const inboxPage = (context: PageContext, executions: readonly Execution[], flash: Flash = null): string =>
  layout(
    context,
    'Waiting for you',
    html`<h1>Calls waiting for your decision</h1>
${flashBox(flash)}
${
  executions.length === 0
    ? html`<p class="empty">Nothing is waiting for you.</p>`
    : html`<table class="inbox">
<thead><tr><th scope="col">Tool</th><th scope="col">Agent</th><th scope="col">Customer</th><th scope="col">Asked</th><th scope="col">Time left</th><th scope="col"></th></tr></thead>
<tbody>
${executions.map(
  (execution) => html`<tr>
<td><code>${execution.tool}</code></td>
<td>${execution.agent_id}</td>
<td>${execution.customer_id ?? '—'}</td>
<td>${when(execution.created_at)}</td>
<td>${timeLeft(Date.parse(execution.expires_at ?? execution.created_at) - context.now)}</td>
<td><a href="${consolePaths.execution(execution.execution_id)}">Review</a></td>
</tr>
`,
)}
</tbody>
</table>`
}`,
  );

export interface ExecutionView {
  readonly execution: Execution;
  /** Why this approver may not decide it, or null when they may. */
  readonly refusal: DecisionRefusal | null;
  readonly flash: Flash;
  /** The agent's recent calls of the same tool, newest first (none shown when absent or empty). */
  readonly recent?: readonly RecentCall[];
}

/** The agent's recent calls of this tool: when, how each ended, and its code; never arguments. */
const recentCalls = (execution: Execution, recent: readonly RecentCall[] | undefined): Html | string =>
  recent === undefined || recent.length === 0
    ? ''
    : html`<h2>Recent calls of this tool by ${execution.agent_id}</h2>
<table class="recent">
<thead><tr><th scope="col">Asked</th><th scope="col">Status</th><th scope="col">Code</th></tr></thead>
<tbody>${recent.map(
        (call) =>
          html`<tr><td>${when(call.created_at)}</td><td class="status-${call.status}">${statusWords[call.status]}</td><td>${call.code === null ? '—' : html`<code>${call.code}</code>`}</td></tr>`,
      )}</tbody>
</table>`;

/**
 * A held call's escalation: to which group and when it was escalated, or, while it waits, when it
 * will be. Its group may decide from that instant, whether or not the escalation pass recorded it yet.
 */
const escalationFact = (execution: Execution, now: number): Html | string => {
  const group = escalationGroupOf(execution);
  const at = escalatesAt(execution);
  if (group === null || at === null) return '';
  if (execution.escalated_at !== null || (execution.status === 'pending_approval' && at <= now)) {
    const escalated = execution.escalated_at ?? new Date(at).toISOString();
    return html`<dt>Escalation</dt><dd>Escalated to ${group} at ${when(escalated)}</dd>`;
  }
  if (execution.status !== 'pending_approval') return '';
  return html`<dt>Escalation</dt><dd>Escalates to ${group} at ${when(new Date(at).toISOString())} <span class="muted">(in ${timeLeft(at - now)}, if nobody decides by then)</span></dd>`;
};

/** An unknown outcome an operator settled: as what, by whom, when and why (the history's last two steps). */
const settlementFact = (execution: Execution): Html | string => {
  const settled = execution.settlement;
  if (settled === null) return '';
  const code = settled.unknown_code === null ? '' : html` (<code>${settled.unknown_code}</code>)`;
  return html`<dt>Outcome settled</dt><dd>was unknown${code}; settled as ${settled.outcome} by ${settled.by}, ${when(settled.at)}: ${visibleText(settled.reason)}</dd>`;
};

export const executionPage = (context: PageContext, view: ExecutionView): string => {
  const { execution } = view;
  const pending = execution.status === 'pending_approval';
  const expiresAt = Date.parse(execution.expires_at ?? execution.created_at);
  const decidable = pending && view.refusal === null && context.csrf !== null && expiresAt > context.now;
  // The customer confirms first: until they have, staff may only reject.
  const customerConfirms = execution.decision?.step?.customer === true && execution.customer_confirmed_at === null;
  return layout(
    context,
    execution.tool,
    html`<h1><code>${execution.tool}</code></h1>
${flashBox(view.flash)}
<p class="status status-${execution.status}">${statusWords[execution.status]}</p>
<dl class="facts">
<dt>Agent</dt><dd>${execution.agent_id}</dd>
<dt>Customer</dt><dd>${execution.customer_id ?? '—'}</dd>
<dt>Asked</dt><dd>${when(execution.created_at)}</dd>
<dt>Policy that asked</dt><dd>${policyNames(execution)}</dd>
<dt>Waits for</dt><dd>${waitsFor(execution)}</dd>
${escalationFact(execution, context.now)}
${approvalsFact(execution)}
${
  execution.decision?.step?.customer === true
    ? html`<dt>Customer's confirmation</dt><dd>${execution.customer_confirmed_at === null ? 'not yet' : html`confirmed ${when(execution.customer_confirmed_at)}`}</dd>`
    : ''
}
${
  pending
    ? html`<dt>Time left</dt><dd>${timeLeft(expiresAt - context.now)} <span class="muted">(until ${when(execution.expires_at)})</span></dd>`
    : html`<dt>Decided</dt><dd>${execution.decided_by === null ? '—' : html`${execution.decided_by}, ${when(execution.decided_at)}`}</dd>`
}
${execution.decision_note === null ? '' : html`<dt>Reason given</dt><dd>${visibleText(execution.decision_note)}</dd>`}
${settlementFact(execution)}
<dt>Execution</dt><dd><code>${execution.execution_id}</code></dd>
</dl>
<h2>Arguments, exactly as they will be sent</h2>
${argumentsTable(execution)}
<p class="muted">Secret values are hidden here and sent as given. Fingerprint <code>${(execution.arguments_hash ?? '').slice(0, 16)}</code>.</p>
${
  decidable
    ? html`<form class="decision" method="post" action="${consolePaths.decision(execution.execution_id)}">
<input type="hidden" name="csrf" value="${context.csrf}">
<input type="hidden" name="arguments_hash" value="${execution.arguments_hash}">
<label for="note">Reason, if you reject (the agent will read it)</label>
<textarea id="note" name="note" maxlength="${maxNoteLength}" rows="2"></textarea>
<div class="buttons">
${customerConfirms ? '' : html`<button type="submit" name="outcome" value="approve" class="approve">${approvalsNeeded(execution) > 1 ? 'Approve' : 'Approve and run'}</button>`}
<button type="submit" name="outcome" value="reject" class="reject">Reject</button>
</div>
${customerConfirms ? html`<p class="notice">${refusalMessages.customer_confirms}</p>` : ''}
</form>`
    : pending && view.refusal !== null
      ? html`<p class="notice">${refusalMessages[view.refusal]}</p>`
      : ''
}
${recentCalls(execution, view.recent)}
<p><a href="${consolePaths.home}">Back to the inbox</a></p>`,
  );
};

export const signInPage = (
  context: PageContext,
  options: { readonly csrf: string; readonly next: string; readonly error: string | null },
): string =>
  layout(
    context,
    'Sign in',
    html`<h1>Sign in to decide held calls</h1>
${options.error === null ? '' : html`<p class="flash error" role="alert">${options.error}</p>`}
${passwordSignInForm({ action: consolePaths.signIn, csrf: options.csrf, next: options.next, idName: 'approver', idLabel: 'Approver id' })}`,
  );

export const messagePage = (context: PageContext, title: string, text: string): string =>
  layout(
    context,
    title,
    html`<h1>${title}</h1><p>${text}</p><p><a href="${consolePaths.home}">Go to the console</a></p>`,
  );

// The console's one stylesheet, served from the console's own path (the CSP allows styles from
// 'self' only) under a name that changes with its content, so it can be cached for good.
import { createHash } from 'node:crypto';

export const stylesheet = `
:root { color-scheme: light dark; --accent: #2457c5; --ok: #1d7a3a; --bad: #b3261e; --muted: #6b6f76; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
.bar { display: flex; justify-content: space-between; align-items: center; padding: .6rem 1.2rem; border-bottom: 1px solid #8884; }
.brand { font-weight: 600; text-decoration: none; color: inherit; }
.who { display: flex; gap: .8rem; align-items: center; margin: 0; }
.groups, .muted { color: var(--muted); }
main { max-width: 60rem; margin: 0 auto; padding: 1.2rem; }
h1 { font-size: 1.4rem; }
h2 { font-size: 1.1rem; margin-top: 1.6rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid #8883; vertical-align: top; }
.arguments th { width: 30%; font-weight: normal; }
/* Every value is isolated: its direction never reorders what stands beside it. */
td, dd, .string, code, bdi { unicode-bidi: isolate; }
.string { white-space: pre-wrap; word-break: break-word; }
.hidden-char { font: 12px ui-monospace, monospace; border: 1px solid var(--bad); color: var(--bad); padding: 0 .2rem; margin: 0 .1rem; border-radius: 3px; }
.secret { color: var(--muted); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
.status { font-weight: 600; }
.status-pending_approval { color: var(--accent); }
.status-succeeded, .status-approved { color: var(--ok); }
.status-rejected, .status-expired, .status-failed, .status-unknown, .status-denied { color: var(--bad); }
.flash { padding: .6rem .8rem; border-radius: 6px; }
.flash.ok { background: #1d7a3a22; }
.flash.error { background: #b3261e22; }
.notice { padding: .6rem .8rem; border-left: 3px solid var(--muted); }
form.decision, form.sign-in { display: grid; gap: .5rem; max-width: 32rem; margin-top: 1.2rem; }
textarea, input { font: inherit; padding: .4rem; }
.buttons { display: flex; gap: .8rem; }
button { font: inherit; padding: .45rem 1rem; border-radius: 6px; border: 1px solid #8886; cursor: pointer; }
button.approve { background: var(--ok); color: white; border-color: var(--ok); }
button.reject { background: transparent; color: var(--bad); border-color: var(--bad); }
button.link { background: none; border: none; color: var(--accent); padding: 0; }
a.button { display: inline-block; padding: .45rem 1rem; border-radius: 6px; border: 1px solid var(--accent); text-decoration: none; }
.empty { color: var(--muted); }
`;

const stylesheetHash = createHash('sha256').update(stylesheet).digest('hex').slice(0, 12);
export const stylesheetPath = `/console/static/console.${stylesheetHash}.css`;

/** The tab icon (an outlined check mark), so browsers do not ask the API's root for one. */
export const icon =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2457c5"/><path d="M4 8.5l2.5 2.5L12 5.5" stroke="#fff" stroke-width="2" fill="none"/></svg>';
export const iconPath = `/console/static/icon.${createHash('sha256').update(icon).digest('hex').slice(0, 12)}.svg`;

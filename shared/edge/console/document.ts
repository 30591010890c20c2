// The one page shell every console and customer page is rendered in: the same head (the
// stylesheet and icon from the console's own paths, the referrer policy forms need) and a header
// bar each audience fills with its own brand and who is signed in.
import { type Html, html } from './html.js';
import { iconPath, stylesheetPath } from './style.js';

/** A whole page: its title, the header bar's content, and the main content. */
export const documentPage = (title: string, header: Html, body: Html): string =>
  html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${title} · Approval Gateway</title>
<link rel="stylesheet" href="${stylesheetPath}">
<link rel="icon" href="${iconPath}" type="image/svg+xml">
</head>
<body>
<header class="bar">
  ${header}
</header>
<main>
${body}
</main>
</body>
</html>
`.text;

/** The password sign-in form of the local runtime (approvers and customers), with its CSRF token. */
export const passwordSignInForm = (form: {
  readonly action: string;
  readonly csrf: string;
  readonly next: string;
  /** The id field's name and label: `approver` / "Approver id", `customer` / "Customer id". */
  readonly idName: string;
  readonly idLabel: string;
}): Html =>
  html`<form class="sign-in" method="post" action="${form.action}">
<input type="hidden" name="csrf" value="${form.csrf}">
<input type="hidden" name="next" value="${form.next}">
<label for="${form.idName}">${form.idLabel}</label>
<input id="${form.idName}" name="${form.idName}" autocomplete="username" required maxlength="64">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="256">
<button type="submit">Sign in</button>
</form>`;

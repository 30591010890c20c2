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

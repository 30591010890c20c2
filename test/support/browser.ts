// A real Chromium for the end-to-end console tests: playwright-core drives the system's browser
// (Debian's chromium package; CI installs it in .ci/run). No browser is downloaded here, and a
// missing one fails the test with what to install rather than skipping it.
import { access, constants } from 'node:fs/promises';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

/** Where the browser is: CHROMIUM_PATH when set, else Debian's /usr/bin/chromium. */
export const chromiumPath = (): string => process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const launchChromium = async (): Promise<Browser> => {
  const executablePath = chromiumPath();
  try {
    await access(executablePath, constants.X_OK);
  } catch {
    throw new Error(
      `No Chromium at ${executablePath}: the browser tests need it. Install it with ` +
        '`apt-get update && apt-get install -y chromium` (as .ci/run does), or set CHROMIUM_PATH to a Chromium binary.',
    );
  }
  return chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
};

/**
 * What pages reported that a clean console page never should: console errors and warnings (a CSP
 * violation is one), uncaught errors, and subresources (the stylesheet) that did not load. An HTTP
 * error status of a page itself is left to the test, which asserts it (Chromium also logs it as a
 * "Failed to load resource" error).
 */
export interface PageProblems {
  readonly list: string[];
}

/** A fresh context (its own cookies: one signed-in approver) and a page whose problems are collected. */
export const openPage = async (
  browser: Browser,
): Promise<{ context: BrowserContext; page: Page; problems: PageProblems }> => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems: PageProblems = { list: [] };
  page.on('console', (message) => {
    if (message.type() !== 'error' && message.type() !== 'warning') return;
    if (message.text().startsWith('Failed to load resource:')) return;
    problems.list.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.list.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => {
    if (request.resourceType() === 'document') return;
    // A load the browser itself dropped because the page moved on (a form post's redirect) is
    // not a failure of the console.
    if (request.failure()?.errorText === 'net::ERR_ABORTED') return;
    problems.list.push(`${request.url()}: ${request.failure()?.errorText}`);
  });
  page.on('response', (response) => {
    if (response.request().resourceType() !== 'document' && response.status() >= 400) {
      problems.list.push(`${response.url()}: HTTP ${response.status()}`);
    }
  });
  return { context, page, problems };
};

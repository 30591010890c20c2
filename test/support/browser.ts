// A real Chromium for the end-to-end console tests: playwright-core drives the headless Chromium
// that the `@sparticuz/chromium` dev dependency ships inside the npm registry package, so a machine
// with nothing but Node and npm runs them. CHROMIUM_PATH points at another Chromium instead.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import sparticuz from '@sparticuz/chromium';
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import * as z from 'zod';
import { projectPath } from '../../infra/paths.js';

const packageVersion = (): string => {
  const manifest = readFileSync(projectPath('node_modules', '@sparticuz', 'chromium', 'package.json'), 'utf8');
  return z.object({ version: z.string() }).parse(JSON.parse(manifest)).version;
};

/** Where the package's browser is unpacked: once per installed version, shared by every test run. */
const unpackedFolder = (): string =>
  projectPath('node_modules', '.cache', `approval-gateway-chromium-${packageVersion()}`);

/**
 * The package's fonts.conf names Lambda's folders (/tmp/fonts …); without a font it can find,
 * Chromium aborts as soon as a page draws a form control. Point it at the unpacked fonts, by the
 * folder's real path: node_modules may be reached through a link from another checkout, and a
 * path through that link dies with it.
 */
const fontConfig = (folder: string): string =>
  `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${join(folder, 'fonts')}</dir>\n  <cachedir>${join(folder, 'fonts-cache')}</cachedir>\n</fontconfig>\n`;

/** Rewrites an unpacked folder's fonts.conf when it names another place (it was unpacked through a link). */
const keepFontConfig = async (folder: string): Promise<void> => {
  const real = realpathSync(folder);
  const file = join(real, 'fonts', 'fonts.conf');
  const expected = fontConfig(real);
  if ((await readFile(file, 'utf8').catch(() => '')) === expected) return;
  const staging = `${file}.${process.pid}`;
  await writeFile(staging, expected);
  await rename(staging, file);
};

/**
 * Unpacks the package's browser (brotli archives, about 5 s) into its folder. The package writes into
 * `os.tmpdir()`; pointing that at a fresh private folder and renaming the finished folder into place
 * makes concurrent test runs safe: each either finds a complete folder or publishes its own whole.
 */
const unpackOnce = async (): Promise<string> => {
  const folder = unpackedFolder();
  const complete = join(folder, '.complete');
  if (existsSync(complete)) {
    await keepFontConfig(folder);
    return join(folder, 'chromium');
  }
  await mkdir(dirname(folder), { recursive: true });
  const staging = await mkdtemp(`${folder}.staging-`);
  const tmpdir = process.env.TMPDIR;
  try {
    process.env.TMPDIR = staging;
    await sparticuz.executablePath();
  } finally {
    if (tmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmpdir;
  }
  await writeFile(join(staging, '.complete'), '');
  try {
    await rename(staging, folder);
  } catch {
    // Another run published the folder first; its copy is as good as ours.
    await rm(staging, { recursive: true, force: true });
  }
  if (!existsSync(complete)) throw new Error(`Chromium could not be unpacked into ${folder}`);
  await keepFontConfig(folder);
  return join(folder, 'chromium');
};

// Unpacking points TMPDIR elsewhere for a moment: one unpacking per process, and nothing else
// (a browser launch reads TMPDIR too) runs before it ends.
let unpacking: Promise<string> | undefined;
const unpack = (): Promise<string> => {
  unpacking ??= unpackOnce();
  return unpacking;
};

/**
 * Headless flags for a closed network (no background connections, updates or sync). The package's
 * own `args` are for Lambda (`--single-process` among them), where a browser with several contexts
 * at once, as the tests open, closes itself.
 */
const chromiumArgs = [
  '--no-sandbox',
  '--no-zygote',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const launchChromium = async (): Promise<Browser> => {
  const override = process.env.CHROMIUM_PATH;
  if (override !== undefined) {
    if (!existsSync(override)) throw new Error(`CHROMIUM_PATH names ${override}, which does not exist`);
    return chromium.launch({ executablePath: override, headless: true, args: chromiumArgs });
  }
  const executablePath = await unpack();
  return chromium.launch({
    executablePath,
    headless: true,
    args: chromiumArgs,
    env: { ...process.env, FONTCONFIG_PATH: join(dirname(executablePath), 'fonts') },
  });
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

/** Waits (5 s at most) for `locator`; when it does not come, fails with the page the browser shows instead. */
export const shows = async (page: Page, locator: Locator, what: string): Promise<void> => {
  try {
    await locator.first().waitFor({ timeout: 5_000 });
  } catch {
    const text =
      (await page
        .locator('body')
        .textContent()
        .catch(() => null)) ?? '';
    throw new Error(`Expected ${what}; the browser is at ${page.url()} showing:\n${text.slice(0, 1_000)}`);
  }
};

/**
 * A page for flows through the OpenID Connect provider used in tests: its development pages link a
 * web font from Google, answered here with an empty stylesheet so the tests never leave loopback.
 */
export const openProviderPage = async (
  browser: Browser,
): Promise<{ context: BrowserContext; page: Page; problems: PageProblems }> => {
  const opened = await openPage(browser);
  await opened.context.route('https://fonts.googleapis.com/**', (route) =>
    route.fulfill({ status: 200, contentType: 'text/css', body: '' }),
  );
  return opened;
};

/**
 * Debian's Chromium through playwright-core (no bundled browsers here), plus helpers shared by every spec:
 * open the app with its token, collect page errors and CSP violations, and save screenshots in test-results/.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ROOT, startLab, type Lab } from './lab';

export const RESULTS_DIR = join(ROOT, 'test-results');

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

export interface AppPage {
  readonly page: Page;
  /** Uncaught page errors, console errors and CSP violations seen so far. */
  readonly problems: string[];
}

/** Opens the app (with the token) in a fresh context and starts collecting problems. */
export async function openApp(browser: Browser, lab: Lab, path = '/'): Promise<AppPage> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console.error: ${msg.text()}`);
  });
  await page.goto(`${lab.origin}${path}#token=${lab.token}`, { waitUntil: 'load' });
  return { page, problems };
}

/** One spec's lab: its own `arlarena serve`, Chromium, and the app opened on `path` and ready. */
export interface LabSession extends AppPage {
  readonly lab: Lab;
  readonly browser: Browser;
  /** Closes the browser, then stops the server. */
  close(): Promise<void>;
}

/** Starts the lab (on `dataDir` when given, else a temporary one), opens the app and waits until it is ready. */
/** `serveArgs`: more `arlarena serve` options, e.g. `--allow-dir DIR` for imports and follows by path. */
export async function openLabSession(
  options: { dataDir?: string; path?: string; serveArgs?: readonly string[] } = {},
): Promise<LabSession> {
  const lab = await startLab({
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    ...(options.serveArgs ? { serveArgs: options.serveArgs } : {}),
  });
  let browser: Browser | undefined;
  try {
    browser = await launchBrowser();
    const app = await openApp(browser, lab, options.path);
    await app.page.waitForSelector('main[data-ready="true"]', { timeout: 30_000 });
    const opened = browser;
    return {
      ...app,
      lab,
      browser: opened,
      close: async () => {
        await opened.close();
        await lab.stop();
      },
    };
  } catch (e) {
    await browser?.close();
    await lab.stop();
    throw e;
  }
}

/** Saves test-results/<name>.png (full page) and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = join(RESULTS_DIR, `${name.replace(/[^A-Za-z0-9_.-]/g, '_')}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

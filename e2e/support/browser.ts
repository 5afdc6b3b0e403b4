/**
 * Debian's Chromium through playwright-core (no bundled browsers here), plus helpers shared by every spec:
 * open the app with its token, collect page errors and CSP violations, and save screenshots in test-results/.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
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
  return openPage(context, lab, path);
}

/** Opens the app (with the token) in a new page of `context` (another browser's, its own window size) and starts collecting problems. */
export async function openPage(context: BrowserContext, lab: Lab, path = '/'): Promise<AppPage> {
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

/** A spec's temporary work folder, the lab serving its data dir (work/data) and a Chromium to open it in. */
export interface SpecLab {
  readonly work: string;
  readonly dataDir: string;
  readonly lab: Lab;
  readonly browser: Browser;
  /** Closes the browser, stops the lab and removes the work folder. */
  close(): Promise<void>;
}

/**
 * Makes a work folder (`prefix` + random, in the OS temp dir), lets `prepare` fill the data dir before the lab opens
 * it (logs written into the work folder and imported with the CLI, runs synthesised), then starts the lab on it and
 * Chromium. Whatever fails on the way is closed and the folder removed before the error is passed on.
 */
export async function startSpecLab(
  prefix: string,
  prepare: (work: string, dataDir: string) => void | Promise<void> = () => {},
): Promise<SpecLab> {
  const work = mkdtempSync(join(tmpdir(), prefix));
  const dataDir = join(work, 'data');
  let lab: Lab | undefined;
  try {
    await prepare(work, dataDir);
    lab = await startLab({ dataDir });
    const browser = await launchBrowser();
    const opened = lab;
    return {
      work,
      dataDir,
      lab,
      browser,
      // Each step whatever the one before did: a browser that fails to close must not leave the lab's server running.
      close: async () => {
        try {
          await browser.close();
        } finally {
          try {
            await opened.stop();
          } finally {
            rmSync(work, { recursive: true, force: true });
          }
        }
      },
    };
  } catch (e) {
    await lab?.stop();
    rmSync(work, { recursive: true, force: true });
    throw e;
  }
}

/** test-results/<name>-light.png and <name>-dark.png of the page as it is now (the app follows prefers-color-scheme). */
export async function screenshotThemes(page: Page, name: string): Promise<void> {
  await screenshot(page, `${name}-light`);
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.waitForTimeout(300);
  await screenshot(page, `${name}-dark`);
  await page.emulateMedia({ colorScheme: 'light' });
}

/** Saves test-results/<name>.png (full page) and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = join(RESULTS_DIR, `${name.replace(/[^A-Za-z0-9_.-]/g, '_')}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

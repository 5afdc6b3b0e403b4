/**
 * Transport-level end-to-end tests: the real `arlarena serve` process over real HTTP and WebSocket, and the
 * same calls made from inside the app page in Chromium (so the CSP, the token in the fragment and the page's
 * own fetch/WebSocket are exercised). UI behaviour is in the *.spec.ts files.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WsClient from 'ws';
import { launchBrowser, openApp, screenshot } from './support/browser';
import { ROOT, startLab, type Lab } from './support/lab';

let lab: Lab;
let browser: Browser;

beforeAll(async () => {
  lab = await startLab();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await lab?.stop();
});

function rawPost(path: string, headers: Record<string, string>, body: string): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: lab.port, path, method: 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) });
        } catch {
          resolve({ status: res.statusCode ?? 0, json: text });
        }
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const headers = () => ({ 'content-type': 'application/json', 'x-arlarena-token': lab.token });

describe('arlarena serve over HTTP', () => {
  it('prints a loopback URL with a fresh random token in the fragment', () => {
    expect(lab.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=[A-Za-z0-9_-]{40,}$/);
    expect(lab.url.endsWith(lab.token)).toBe(true);
  });

  it('app.info answers with the version, the browser transport and the compute backend', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const r = await lab.call('app.info');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.version).toBe(pkg.version);
    expect(r.value.transport).toBe('browser');
    expect(r.value.dataDir).toBe(lab.dataDir);
    expect(['tensorflow-gpu', 'tensorflow', 'wasm', 'cpu']).toContain(r.value.compute.training);
    expect(r.value.compute.detail.length).toBeGreaterThan(10);
  });

  it('refuses requests without the token or with a wrong one (401, typed)', async () => {
    const none = await rawPost('/api/call', { 'content-type': 'application/json' }, '{"method":"app.info"}');
    expect(none.status).toBe(401);
    expect(none.json).toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED' } });
    const wrong = await rawPost(
      '/api/call',
      { 'content-type': 'application/json', 'x-arlarena-token': 'x'.repeat(lab.token.length) },
      '{"method":"app.info"}',
    );
    expect(wrong.status).toBe(401);
  });

  it('names the field of a missing or malformed argument', async () => {
    const missing = await lab.call('runs.get', {} as never);
    expect(missing).toMatchObject({ ok: false, error: { code: 'VALIDATION', field: 'runId' } });
    const malformed = await lab.call('runs.metrics', { runIds: ['r1'], keys: ['x'], maxPoints: 'many' } as never);
    expect(malformed).toMatchObject({ ok: false, error: { code: 'VALIDATION', field: 'maxPoints' } });
    const nested = await lab.call('sessions.start', {
      preset: 'sampo',
      env: 'sokoban',
      overrides: { 'optim.lr': { nested: true } },
    } as never);
    expect(nested).toMatchObject({ ok: false, error: { code: 'VALIDATION', field: 'overrides.optim.lr' } });
    const unknown = await rawPost('/api/call', headers(), '{"method":"runs.selfDestruct"}');
    expect(unknown.json).toMatchObject({ ok: false, error: { code: 'UNKNOWN_METHOD' } });
  });

  it('answers malformed JSON and an oversized body with typed errors', async () => {
    const bad = await rawPost('/api/call', headers(), '{"method": "app.info", input: }');
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ ok: false, error: { code: 'VALIDATION', field: '(body)' } });
    // Declares a body far over the limit; the server answers 413 from the header without reading it.
    const huge = await new Promise<number>((resolve) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: lab.port,
          path: '/api/call',
          method: 'POST',
          headers: { ...headers(), 'content-length': String(2 ** 31) },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', () => resolve(-1));
      req.write('{"method":"app.info"');
    });
    expect(huge).toBe(413);
  });

  it('is still alive and answering after all of that', async () => {
    expect(lab.alive()).toBe(true);
    expect((await lab.call('catalog.metrics')).ok).toBe(true);
  });
});

describe('arlarena serve over WebSocket', () => {
  const connect = (protocols: string[]) =>
    new Promise<WsClient>((resolve, reject) => {
      const ws = new WsClient(`ws://127.0.0.1:${lab.port}/api/events`, protocols);
      ws.once('open', () => resolve(ws));
      ws.once('unexpected-response', (_q, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once('error', reject);
    });

  it('refuses a socket without the token', async () => {
    await expect(connect(['arlarena'])).rejects.toThrow('HTTP 401');
  });

  it('acknowledges subscriptions and reports a bad event name', async () => {
    const ws = await connect(['arlarena', `token.${lab.token}`]);
    const messages: any[] = [];
    ws.on('message', (d) => messages.push(JSON.parse(d.toString())));
    ws.send(JSON.stringify({ type: 'subscribe', event: 'session.status' }));
    ws.send(JSON.stringify({ type: 'subscribe', event: 'session.explode' }));
    await expect.poll(() => messages.length, { timeout: 5000 }).toBe(2);
    expect(messages[0]).toEqual({ type: 'subscribed', event: 'session.status' });
    expect(messages[1]).toMatchObject({ type: 'error', error: { code: 'VALIDATION', field: 'event' } });
    ws.close();
    expect(lab.alive()).toBe(true);
  });
});

describe('the app page in Chromium', () => {
  it('loads under the CSP and its own fetch and WebSocket reach the API with the launch token', async () => {
    const { page, problems } = await openApp(browser, lab);
    await expect.poll(() => page.title()).toContain('ARLArena');
    const fromPage = await page.evaluate(async () => {
      const token = /token=([A-Za-z0-9_-]+)/.exec(location.hash)?.[1] ?? '';
      const post = (t: string) =>
        fetch('/api/call', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-arlarena-token': t },
          body: JSON.stringify({ method: 'app.info' }),
        }).then(async (r) => ({ status: r.status, body: await r.json() }));
      const withToken = await post(token);
      const withoutToken = await post('');
      const ws = await new Promise<string>((resolve) => {
        const socket = new WebSocket(`ws://${location.host}/api/events`, ['arlarena', `token.${token}`]);
        socket.onopen = () => socket.send(JSON.stringify({ type: 'subscribe', event: 'runs.changed' }));
        socket.onmessage = (ev) => {
          resolve(String(ev.data));
          socket.close();
        };
        socket.onerror = () => resolve('error');
      });
      return { withToken, withoutToken, ws };
    });
    expect(fromPage.withToken.status).toBe(200);
    expect(fromPage.withToken.body).toMatchObject({ ok: true, value: { transport: 'browser' } });
    expect(fromPage.withoutToken.status).toBe(401);
    expect(JSON.parse(fromPage.ws)).toEqual({ type: 'subscribed', event: 'runs.changed' });
    await screenshot(page, 'api-app-loaded');
    expect(problems.filter((p) => /Content Security Policy|Refused to/i.test(p))).toEqual([]);
    await page.context().close();
  });

  it('a script injected from another origin is blocked by the CSP', async () => {
    const { page, problems } = await openApp(browser, lab);
    const blocked = await page.evaluate(
      () =>
        new Promise<boolean>((resolve) => {
          document.addEventListener('securitypolicyviolation', () => resolve(true), { once: true });
          const s = document.createElement('script');
          s.textContent = 'window.__inline = 1';
          document.head.appendChild(s);
          setTimeout(() => resolve(false), 2000);
        }),
    );
    expect(blocked).toBe(true);
    expect(await page.evaluate(() => (window as unknown as { __inline?: number }).__inline)).toBeUndefined();
    expect(problems.some((p) => /Content Security Policy/i.test(p))).toBe(true);
    await page.context().close();
  });
});

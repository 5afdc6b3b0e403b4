/**
 * Test kit for the browser-mode server's tests: a POST to /api/call over node:http (not fetch, which adds and
 * normalises headers), with the server's token and any headers a test adds or overrides (a foreign Origin, another
 * content type).
 */
import { request } from 'node:http';

/** The answer's status and its body parsed as JSON (null when empty); a failed connection rejects. */
export function postApiCall(
  port: number,
  token: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/api/call',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-arlarena-token': token, ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : null }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Browser mode: a file the backend published for download (`/api/download/<id>`, e.g. an exported bundle) is
 * fetched with the launch token in the X-ArlArena-Token header and handed to the browser as a blob, so no URL
 * — the link, the browser's history or its downloads list — ever holds the token (it was in the
 * link's query string).
 */
import { TOKEN_HEADER, readLaunchToken } from './transport';

function sessionStore(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

/** Downloads `path` as `fileName`; throws with the server's message when it refuses. */
export async function downloadPublished(path: string, fileName: string): Promise<void> {
  const token = readLaunchToken(window.location.hash, null) ?? readLaunchToken('', sessionStore());
  if (!token) throw new Error('this page has no launch token; open the URL printed by arlarena serve (it ends in #token=…)');
  const res = await fetch(path, { headers: { [TOKEN_HEADER]: token } });
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
    throw new Error(`the download failed (HTTP ${res.status}): ${body?.error?.message ?? res.statusText}`);
  }
  downloadBlob(fileName, await res.blob());
}

/** Hands `blob` to the browser (or Electron's download handler) as a file named `fileName`. */
export function downloadBlob(fileName: string, blob: Blob): void {
  const href = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = href;
  a.download = fileName;
  a.style.display = 'none';
  document.body.append(a);
  a.click();
  a.remove();
  // Revoked later: the browser reads the blob after the click returns.
  setTimeout(() => URL.revokeObjectURL(href), 60_000);
}

/** Hands `text` to the browser (or Electron's download handler) as a file named `fileName`. */
export function downloadText(fileName: string, text: string, type = 'text/csv'): void {
  downloadBlob(fileName, new Blob([text], { type }));
}

/** The bytes of a base64 `data:` URL (ECharts' getDataURL) as a Blob, without fetch (the CSP's connect-src). */
export function dataUrlBlob(url: string): Blob {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (!m) throw new Error('not a base64 data URL');
  const bin = atob(m[2]);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new Blob([bytes], { type: m[1] });
}

/**
 * The Content-Security-Policy of the renderer, for both transports (Electron: response header + meta tag;
 * browser mode: response header). Scripts only from the app itself; no eval, plugins, frames, forms or
 * foreign connections. `style-src 'unsafe-inline'` is allowed because Svelte and ECharts set inline styles;
 * styles cannot run code.
 */
export function rendererCsp(options: { connect?: string[] } = {}): string {
  const connect = ["'self'", ...(options.connect ?? [])].join(' ');
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src ${connect}`,
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "frame-src 'none'",
  ].join('; ');
}

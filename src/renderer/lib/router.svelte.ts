import { formatRoute, parseRoute, type Route } from './router';

/** The current view, synced with the address bar (history.pushState; in-memory if the page forbids it). */
export class Router {
  route = $state<Route>({ view: 'runs' });

  constructor() {
    this.route = parseRoute(window.location.search);
    window.addEventListener('popstate', () => {
      this.route = parseRoute(window.location.search);
    });
  }

  go(r: Route, replace = false): void {
    this.route = r;
    const url = formatRoute(r) + window.location.hash;
    try {
      if (replace) history.replaceState(null, '', url);
      else history.pushState(null, '', url);
    } catch {
      // file:// pages (packaged Electron) may refuse URL changes; the in-memory route still works.
    }
  }
}

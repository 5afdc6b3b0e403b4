/**
 * Views and their addresses. The route lives in the URL's query string (`?view=compare&runs=a,b`) so the
 * fragment stays free for browser mode's launch token, and back/forward and reload keep the view.
 */
export type Route =
  | { view: 'runs' }
  | { view: 'new' }
  | { view: 'run'; id: string; metric?: string; step?: number }
  | { view: 'compare'; ids: string[]; group?: string }
  | { view: 'studies' }
  | { view: 'ladder'; name?: string; committed?: boolean }
  | { view: 'alerts' }
  | { view: 'cluster' }
  | { view: 'about' };

export type ViewName = Route['view'];

/** Views that open with charts: the page starts the chart worker as it loads them (main.ts), and preloads it at
 * idle on the others (App.svelte). */
export const CHART_VIEWS: ReadonlySet<ViewName> = new Set(['compare', 'run', 'alerts']);

const ID = /^[A-Za-z0-9_-]{1,64}$/;
/** A config path to group Compare by (`&group=preset`, from the Study view). */
const GROUP = /^[A-Za-z0-9_.]{1,100}$/;
/** A metric key and a step to open the run view at (`&metric=grad/norm&step=40`, from an alert). */
const METRIC = /^[A-Za-z0-9_./:@-]{1,120}$/;
const STEP = /^\d{1,9}$/;
/** A ladder's name (`&name=…`): the same rule as the API's LadderName (src/shared/ladders.ts). */
const LADDER = /^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$/;

export function parseRoute(search: string): Route {
  const q = new URLSearchParams(search.startsWith('?') ? search.slice(1) : search);
  const view = q.get('view');
  switch (view) {
    case 'new':
      return { view: 'new' };
    case 'alerts':
      return { view: 'alerts' };
    case 'studies':
      return { view: 'studies' };
    case 'ladder': {
      const name = q.get('name') ?? '';
      if (!LADDER.test(name)) return { view: 'ladder' };
      // `&source=committed`: the summary committed in the checkout, not the data dir's ladder of that name.
      return q.get('source') === 'committed' ? { view: 'ladder', name, committed: true } : { view: 'ladder', name };
    }
    case 'about':
      return { view: 'about' };
    case 'cluster':
      return { view: 'cluster' };
    case 'run': {
      const id = q.get('id') ?? '';
      if (!ID.test(id)) return { view: 'runs' };
      const metric = q.get('metric') ?? '';
      const step = q.get('step') ?? '';
      if (!METRIC.test(metric)) return { view: 'run', id };
      return STEP.test(step) ? { view: 'run', id, metric, step: Number(step) } : { view: 'run', id, metric };
    }
    case 'compare': {
      const ids = [...new Set((q.get('runs') ?? '').split(',').filter((s) => ID.test(s)))];
      const group = q.get('group') ?? '';
      return GROUP.test(group) ? { view: 'compare', ids, group } : { view: 'compare', ids };
    }
    default:
      return { view: 'runs' };
  }
}

export function formatRoute(r: Route): string {
  switch (r.view) {
    case 'runs':
      return '?view=runs';
    case 'run':
      if (r.metric && METRIC.test(r.metric)) {
        const step = r.step !== undefined && Number.isInteger(r.step) && r.step >= 0 ? `&step=${r.step}` : '';
        return `?view=run&id=${encodeURIComponent(r.id)}&metric=${encodeURIComponent(r.metric)}${step}`;
      }
      return `?view=run&id=${encodeURIComponent(r.id)}`;
    case 'compare': {
      const group = r.group && GROUP.test(r.group) ? `&group=${r.group}` : '';
      return r.ids.length ? `?view=compare&runs=${r.ids.map(encodeURIComponent).join(',')}${group}` : '?view=compare';
    }
    case 'ladder':
      if (!r.name || !LADDER.test(r.name)) return '?view=ladder';
      return `?view=ladder&name=${encodeURIComponent(r.name)}${r.committed ? '&source=committed' : ''}`;
    default:
      return `?view=${r.view}`;
  }
}

/**
 * An error toast in words: what the user was doing ("Could not start the run"), the server's sentence, and the
 * method and code only as small print for a bug report — not "sessions.start failed UNAVAILABLE … (field on)".
 */
const ACTIONS: Readonly<Record<string, string>> = {
  'sessions.start': 'start the run',
  'sessions.pause': 'pause the run',
  'sessions.resume': 'resume the run',
  'sessions.stop': 'stop the run',
  'runs.rename': 'rename the run',
  'runs.tag': 'tag the run',
  'runs.delete': 'delete the run',
  'runs.get': 'open the run',
  'runs.getMany': 'load the runs',
  'runs.list': 'list the runs',
  'runs.metrics': 'load the charts',
  'runs.chartCsv': 'export the chart',
  'runs.detect': 'run the detector',
  'runs.baselines': 'compute the baselines',
  'follow.start': 'follow the log',
  'follow.stop': 'stop following',
  'imports.file': 'import the file',
  'imports.files': 'import the files',
  'imports.path': 'import the path',
  'imports.pick': 'open the file dialog',
  'bundles.export': 'export the bundle',
  'config.resolve': 'check the config',
};

/** "Could not start the run" for `sessions.start`; "Could not complete <method>" for one not listed. */
export function errorHeadline(method: string): string {
  return `Could not ${ACTIONS[method] ?? `complete ${method}`}`;
}

/** The field a message is about, as the form names it: "on" → "on (where it trains)"; other fields as they are. */
export function fieldLabel(field: string): string {
  return field === 'on' ? 'on (where it trains)' : field;
}

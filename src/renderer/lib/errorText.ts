/**
 * An error toast in words: what the user was doing ("Could not start the run"), the server's sentence, and the
 * method and code only as small print for a bug report — not "sessions.start failed UNAVAILABLE … (field on)".
 */
import type { ApiMethodName } from '../../shared/api';

/** Every method of the contract has its words, so no toast falls back to the method's name. */
const ACTIONS: Readonly<Record<ApiMethodName, string>> = {
  'app.info': 'read the lab information',
  'catalog.presets': 'load the presets',
  'catalog.envs': 'load the environments',
  'catalog.metrics': 'load the metric catalog',
  'catalog.configFields': 'load the config fields',
  'catalog.importFormats': 'load the import formats',
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
  'runs.note': 'save the note',
  'runs.metricKeys': 'list the logged metrics',
  'runs.axisKeys': 'list the x-axis keys',
  'runs.trajectories': 'load the episodes',
  'runs.check': 'check the run',
  'sessions.list': 'list the running sessions',
  'alerts.list': 'load the alerts',
  'alerts.ack': 'acknowledge the alert',
  'bundles.import': 'import the bundle',
  'follow.list': 'list the followed logs',
  'models.inspect': 'inspect the model',
  'models.folders': 'list the model folders',
  'studies.list': 'load the studies',
  'ladders.list': 'list the ladders',
  'ladders.get': 'load the ladder',
  'workspace.get': 'load the saved workspace',
  'workspace.set': 'save the workspace',
  'remotes.list': 'list the clusters',
  'remotes.add': 'add the cluster',
  'remotes.test': 'test the cluster',
  'remotes.remove': 'remove the cluster',
  'remotes.jobs': "list the cluster's jobs",
  'remotes.jobLog': "read the job's log",
  'remotes.stopJob': 'stop the job',
};

/** "Could not start the run" for `sessions.start`; "Could not complete <method>" for one not listed. */
export function errorHeadline(method: string): string {
  return `Could not ${(ACTIONS as Readonly<Record<string, string>>)[method] ?? `complete ${method}`}`;
}

/** The field a message is about, as the form names it: "on" → "on (where it trains)"; other fields as they are. */
export function fieldLabel(field: string): string {
  return field === 'on' ? 'on (where it trains)' : field;
}

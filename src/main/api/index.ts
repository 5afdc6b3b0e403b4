/** The main-side API: router + handlers over the services, shared by both transports. */
import type { LabServices } from '../app/lab';
import { createHandlers } from './handlers/index';
import { createRouter, type Router, type RouterOptions } from './router';

export type { Router } from './router';
export type { CallContext, Handler, Handlers, AreaMethods, ParsedInput } from './types';
export { ApiFailure } from './errors';

export function createApi(services: LabServices, options: RouterOptions = {}): Router {
  return createRouter(createHandlers(services), options);
}

/** The main-side API: router + handlers over the services, shared by both transports. */
import type { MainServices } from '../services';
import { createHandlers } from './handlers/index';
import { createRouter, type Router, type RouterOptions } from './router';

export type { Router } from './router';
export type { CallContext, Handler, Handlers, AreaMethods, ParsedInput } from './types';
export { ApiFailure } from './errors';

export function createApi(services: MainServices, options: RouterOptions = {}): Router {
  return createRouter(createHandlers(services), options);
}

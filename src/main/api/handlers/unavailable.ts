import { apiMethods } from '../../../shared/api';
import { err } from '../../../shared/result';
import type { AreaMethods, Handlers } from '../types';

/**
 * Handlers for an area whose implementation has not landed: every method answers UNAVAILABLE with `why`
 * (arguments are still validated by the router first, so bad input is reported as usual).
 */
export function unavailableArea<A extends string>(area: A, why: string): Handlers<AreaMethods<A>> {
  const handlers: Record<string, () => ReturnType<typeof err>> = {};
  for (const method of Object.keys(apiMethods)) {
    if (method.startsWith(`${area}.`)) handlers[method] = () => err('UNAVAILABLE', `${method}: ${why}`);
  }
  return handlers as unknown as Handlers<AreaMethods<A>>;
}

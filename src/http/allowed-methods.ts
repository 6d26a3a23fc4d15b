/**
 * Which methods each path accepts, learnt from the routes as they are registered, so that a known
 * path asked with another method is answered 405 with `Allow` instead of 404.
 */
import type { FastifyInstance } from 'fastify';
import { HorologiumError } from '../common/errors.js';

export type AllowedMethods = (path: string) => string[];

export function trackAllowedMethods(app: FastifyInstance): AllowedMethods {
  const routes: Array<{ pattern: RegExp; methods: string[] }> = [];
  app.addHook('onRoute', (route) => {
    if (route.url === '*' || route.url.includes('*')) return;
    // `:param` segments match any one segment, as Fastify's router does.
    const pattern = new RegExp(`^${route.url.split('/').map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}$`);
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    routes.push({ pattern, methods });
  });
  return (path) => {
    const allowed = new Set<string>();
    for (const r of routes) if (r.pattern.test(path)) for (const m of r.methods) allowed.add(m);
    return [...allowed].sort();
  };
}

/** What a request no route takes gets: 404, or 405 with Allow for a known path asked with another method. */
export function noRouteError(allowedMethods: AllowedMethods, url: string): HorologiumError {
  const path = url.split('?')[0] as string;
  const allowed = allowedMethods(path);
  if (allowed.length === 0) return new HorologiumError('NOT_FOUND');
  return new HorologiumError('METHOD_NOT_ALLOWED', `${path} accepts ${allowed.join(', ')}.`, [], { allow: allowed.join(', ') });
}

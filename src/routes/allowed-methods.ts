/**
 * Which methods each path accepts, learnt from the routes as they are registered, so that a known
 * path asked with another method is answered 405 with `Allow` instead of 404.
 */
import type { FastifyInstance } from 'fastify';

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

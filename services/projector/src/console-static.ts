import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HttpResponse } from '@dura/service-kit';
import type { ApiRoute } from './auth/guard';

/** Where the console's built assets are unless `PROJECTOR_CONSOLE_DIR` says otherwise. */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL('../../console/dist', import.meta.url));

/** The path the console is served under. */
export const CONSOLE_PATH = '/ui/';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * The console's static files under `/ui/` (public: the files hold no data; every call they make presents
 * the user's token), `index.html` for any other path under it (the console's own routes), and `/` redirecting
 * there. Files are read on each request, so a rebuilt console is served without a restart.
 */
export function consoleStaticRoutes(dir: string): ApiRoute[] {
  const root = normalize(dir);
  const serve = async (relative: string): Promise<HttpResponse> => {
    const path = normalize(join(root, relative));
    // Path parameters never hold '/', but '..' is one segment: never leave the console's directory.
    if (!path.startsWith(root + sep) && path !== root) return notFound(relative);
    const isAsset = extname(path) !== '';
    try {
      const text = await readFile(isAsset ? path : join(root, 'index.html'), 'utf8');
      const type = TYPES[isAsset ? extname(path) : '.html'] ?? 'application/octet-stream';
      const cache = relative.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
      return {
        status: 200,
        text,
        headers: {
          'content-type': type,
          'cache-control': cache,
          'x-content-type-options': 'nosniff',
          // A worker's script carries its own policy (the page's does not reach it): no eval there either.
          ...(type.startsWith('text/html') || type.startsWith('text/javascript')
            ? { 'content-security-policy': CSP }
            : {}),
        },
      };
    } catch {
      if (!isAsset) return missingBuild(root);
      return notFound(relative);
    }
  };
  const depths = ['/ui/:a', '/ui/:a/:b', '/ui/:a/:b/:c'];
  return [
    {
      method: 'GET',
      path: '/',
      scope: 'public',
      handle: () => Promise.resolve({ status: 302, text: '', headers: { location: CONSOLE_PATH } }),
    },
    { method: 'GET', path: '/ui', scope: 'public', handle: () => serve('index.html') },
    ...depths.map((path): ApiRoute => ({
      method: 'GET',
      path,
      scope: 'public',
      handle: ({ params }) => serve(Object.values(params).join('/')),
    })),
  ];
}

/** Scripts and styles from this origin only; calls only to this origin (the API). */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'";

function notFound(path: string): HttpResponse {
  return { status: 404, body: { error: { code: 'not_found', message: `no console file ${path}` } } };
}

function missingBuild(root: string): HttpResponse {
  return {
    status: 503,
    body: {
      error: {
        code: 'console_not_built',
        message: `the console is not built in ${root}: run "npm run build -w @dura/console" (npm ci builds it), or set PROJECTOR_CONSOLE_DIR`,
      },
    },
  };
}

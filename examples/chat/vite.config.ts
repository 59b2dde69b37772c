import { defineConfig, type ProxyOptions } from 'vite';
import react from '@vitejs/plugin-react';

// The page calls /api/chat on its own origin; the dev and preview servers hand /api/* to the projector
// (DURA_API_URL, default the dev stack's http://127.0.0.1:8080), adding DURA_API_TOKEN as the bearer token
// when one is set, so no credential is ever built into the page.
const api = process.env.DURA_API_URL ?? 'http://127.0.0.1:8080';
const token = process.env.DURA_API_TOKEN;
const proxy: Record<string, ProxyOptions> = {
  '/api': {
    target: api,
    changeOrigin: true,
    rewrite: (path) => path.replace(/^\/api/, ''),
    ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
    configure: (server) => {
      // A request from this page (its Origin is this server's) is this server's own call to the API: the
      // browser's Origin is dropped. Any other page's Origin is passed on, and the API refuses it.
      server.on('proxyReq', (proxyReq, req) => {
        if (req.headers.origin === `http://${req.headers.host ?? ''}`) proxyReq.removeHeader('origin');
      });
    },
  },
};

export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1500 },
  server: { proxy },
  preview: { proxy },
});

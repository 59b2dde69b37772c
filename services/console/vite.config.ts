import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// Served by the projector under /ui/, same origin as the API: no dev proxy, no absolute API URL.
export default defineConfig({
  base: '/ui/',
  plugins: [react()],
  // The event reader (src/api/event-pages.worker.ts) is a module worker, as the page constructs it.
  worker: { format: 'es' },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1500 },
});

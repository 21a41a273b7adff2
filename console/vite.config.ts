import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Served by the gateway at /ui (gateway/src/ui/serve-console.ts); `npm run dev` proxies /api to a local gateway.
export default defineConfig({
  base: '/ui/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // No inline code or data: URIs, so the gateway's Content-Security-Policy needs no exception.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
  },
  server: { proxy: { '/api': 'http://127.0.0.1:8080' } },
});

import { defineConfig } from 'vite';

// The production build lands in dist/public, which the server serves at `/` (same origin as the API).
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  build: {
    outDir: '../dist/public',
    emptyOutDir: true,
    // The county offices' browsers: Chromium 86 (360 Secure Browser 13) and 109 (Windows 7's last
    // Chrome); esbuild lowers newer syntax for them (docs/decisions/old-chromium.md).
    target: 'chrome86',
    sourcemap: true,
  },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  worker: { format: 'es' },
  server: { proxy: { '/api': 'http://127.0.0.1:3000' } },
});

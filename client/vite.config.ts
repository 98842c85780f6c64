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
    // pdf.js (1.6 MB, the PDF preview's) is a chunk of its own, loaded when a clerk first previews a PDF.
    chunkSizeWarningLimit: 2048,
  },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  worker: { format: 'es' },
  server: { proxy: { '/api': 'http://127.0.0.1:3000' } },
});

import { defineConfig } from 'vite';

// The built page is committed under mallard-server's resources and served from the jar at /ui/ and /v1/ui/,
// so every address in it is relative and nothing is inlined (the server's Content-Security-Policy forbids inline code).
export default defineConfig({
  base: './',
  build: {
    outDir: '../resources/dev/mallard/server/console/ui',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
  },
});

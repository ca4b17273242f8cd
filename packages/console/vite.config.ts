import preact from '@preact/preset-vite'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'

export default defineConfig({
  base: '/console/',
  plugins: [preact()],
  resolve: {
    // The seeded synthetic palms of the service's matcher (browser-safe: no Node built-ins), for the
    // playground's "pick a synthetic person".
    alias: { 'palmvein-synthetic': fileURLToPath(new URL('../matcher/src/synthetic.ts', import.meta.url)) },
  },
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    emptyOutDir: true,
    sourcemap: false,
    // index.html names the hashed files; nothing is inlined (the CSP allows no inline script or data: script).
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
})

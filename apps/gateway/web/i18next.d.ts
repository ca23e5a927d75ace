// The i18next ES module, served beside the app's own files at /assets/i18next.js (routes/web.ts takes
// it from node_modules); this file only gives `tsc -p apps/gateway/web` its types.
export { default } from 'i18next';

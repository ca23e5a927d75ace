// i18next, served beside the app's own files at /assets/i18next.js (routes/web.ts takes its minified
// build from node_modules and serves it as an ES module); this file only gives `tsc -p apps/gateway/web`
// its types.
export { default } from 'i18next';

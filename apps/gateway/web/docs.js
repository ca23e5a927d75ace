// @ts-check
// The API reference (/docs): Swagger UI, loaded from the gateway itself, renders /api/openapi.json.
// No validator badge (it would call an outside service) and no "try it out" by default: the examples
// show each request and answer; a reader may still turn it on per operation.

/** @type {any} */
const globals = window;

globals.SwaggerUIBundle({
  url: '/api/openapi.json',
  dom_id: '#docs',
  deepLinking: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  displayRequestDuration: true,
  validatorUrl: null,
  tryItOutEnabled: false,
});

// @ts-check
// The API reference (/docs): Swagger UI, loaded from the gateway itself, renders /api/openapi.json.
// The reference itself is in English in every language (it is the OpenAPI document's own text); the
// page around it is translated by i18n.js.
// No validator badge (it would call an outside service) and no "try it out" by default: the examples
// show each request and answer; a reader may still turn it on per operation.
// Two accessibility repairs of Swagger UI's markup (axe-core finds them otherwise): the document's one
// server (this gateway) is left out, so no unlabelled server picker is drawn; and the deep link inside
// each operation's toggle button loses its href, since a link inside a button is two controls in one
// (the address bar still follows the open operation); and a long example, a scrolling box, can be
// reached with the keyboard.

/** @type {any} */
const globals = window;
const root = document.getElementById('docs');

function repair() {
  for (const link of root.querySelectorAll('.opblock-summary-control a[href]')) link.removeAttribute('href');
  for (const example of root.querySelectorAll('pre.microlight:not([tabindex])')) example.setAttribute('tabindex', '0');
}

new MutationObserver(repair).observe(root, { childList: true, subtree: true });

fetch('/api/openapi.json')
  .then((res) => {
    if (!res.ok) throw new Error(`The API document answered ${res.status}.`);
    return res.json();
  })
  .then((spec) => {
    delete spec.servers;
    globals.SwaggerUIBundle({
      spec,
      dom_id: '#docs',
      deepLinking: true,
      docExpansion: 'list',
      defaultModelsExpandDepth: 0,
      displayRequestDuration: true,
      validatorUrl: null,
      tryItOutEnabled: false,
    });
  })
  .catch((err) => {
    // The page's own (translated) words, and the technical reason as it came.
    root.replaceChildren();
    document.getElementById('docs-failed-reason').textContent = `(${err.message})`;
    document.getElementById('docs-failed').hidden = false;
  });

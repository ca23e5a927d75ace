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
// Each error answer of an operation (anything but 2xx) shows its description, with its media type,
// example and headers folded behind a button: every route answers the same error envelope, and
// unfolded, ten of them made the extract operation about 6,500 px tall.

/** @type {any} */
const globals = window;
const root = document.getElementById('docs');

function repair() {
  for (const link of root.querySelectorAll('.opblock-summary-control a[href]')) link.removeAttribute('href');
  for (const example of root.querySelectorAll('pre.microlight:not([tabindex])')) example.setAttribute('tabindex', '0');
  for (const row of root.querySelectorAll('tr.response[data-code]:not([data-folded])')) fold(row);
}

/** Folds an error answer's details behind a button (a 2xx answer, the one a caller wants, stays open). @param {Element} row */
function fold(row) {
  const cell = row.querySelector('.response-col_description');
  if (/^2/.test(row.getAttribute('data-code') ?? '') || !cell || !row.querySelector('.model-example, .headers-wrapper'))
    return;
  row.setAttribute('data-folded', 'true');
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'response-details';
  button.setAttribute('aria-expanded', 'false');
  button.textContent = 'Example and headers';
  button.addEventListener('click', () => {
    const open = row.getAttribute('data-folded') === 'true';
    row.setAttribute('data-folded', String(!open));
    button.setAttribute('aria-expanded', String(open));
  });
  // Under the description, above what it opens (the details then read downward from their button).
  const description = cell.querySelector('.response-col_description__inner');
  if (description) description.after(button);
  else cell.prepend(button);
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

// @ts-check
// A link handed to the front page — `/?u=<link>` from a bookmarklet or a shared link, or the installed
// app's share target (some phones put the link in `text`, among other words) — fills the URL field
// and focuses it, so one press of Enter extracts it.

/** The first http(s) link in a piece of text, or null. */
export function linkIn(text) {
  const match = /\bhttps?:\/\/[^\s<>"']+/i.exec(text ?? '');
  return match ? match[0] : null;
}

const params = new URLSearchParams(window.location.search);
const shared = params.get('u')?.trim() || linkIn(params.get('text')) || linkIn(params.get('title'));
const input = /** @type {HTMLInputElement | null} */ (document.getElementById('url'));
if (shared && input) {
  input.value = shared.slice(0, input.maxLength > 0 ? input.maxLength : 2048);
  input.focus();
}

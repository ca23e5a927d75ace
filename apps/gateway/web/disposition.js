// @ts-check
// The file name a download's Content-Disposition header gives, for the pages that save files.

/** The name a Content-Disposition header gives, RFC 6266 `filename*` first. */
export function filenameFrom(header) {
  if (!header) return null;
  const extended = /filename\*\s*=\s*[^']*'[^']*'([^;]+)/i.exec(header);
  let name = null;
  if (extended) {
    try {
      name = decodeURIComponent(extended[1].trim());
    } catch {
      name = null;
    }
  }
  if (!name) {
    const plain = /filename\s*=\s*(?:"((?:\\.|[^"\\])*)"|([^;]+))/i.exec(header);
    name = plain ? (plain[1] !== undefined ? plain[1].replace(/\\(.)/g, '$1') : plain[2].trim()) : null;
  }
  return name ? name.replace(/[\\/\u0000-\u001f]/g, '_') : null;
}

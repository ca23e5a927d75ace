// A DASH source's URL names its representation in the fragment: `manifest#representation=ID`, and
// `&type=audio` (or video, text) when an audio and a video representation share that id. The
// extractor writes it (packages/extractors/src/dash.ts); a job reads it back here.

const FRAGMENT = '#representation=';

export interface DashRepresentation {
  /** The manifest's URL, without the fragment. */
  url: string;
  id: string;
  type?: 'video' | 'audio' | 'text';
}

/** The manifest URL and representation a DASH source URL names, or undefined when it names none. */
export function parseDashFragment(url: string): DashRepresentation | undefined {
  const at = url.indexOf(FRAGMENT);
  if (at < 0) return undefined;
  // The id is percent-encoded, so a literal '&' only ever starts a parameter.
  const [id, ...params] = url.slice(at + FRAGMENT.length).split('&');
  let type: DashRepresentation['type'];
  for (const p of params)
    if (p === 'type=video' || p === 'type=audio' || p === 'type=text') type = p.slice(5) as DashRepresentation['type'];
  let decoded: string;
  try {
    decoded = decodeURIComponent(id);
  } catch {
    decoded = id; // a malformed escape: the id as written, which ffmpeg's map then refuses
  }
  return { url: url.slice(0, at), id: decoded, ...(type ? { type } : {}) };
}

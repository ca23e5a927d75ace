// A download's file name: the title the extract gave, plus the extension of what is delivered, once.
// Titles taken from URLs often end in one already (`clip.mp4`, `poster.jpg`, `master.m3u8`), which
// gave `clip.mp4.mp4`. One rule for the worker's artifacts and the gateway's direct streams.

// Media, image and manifest extensions a title may end in; anything else (`Episode 4.5`) is part of the title.
const MEDIA_EXTENSION =
  /\.(?:mp4|m4v|m4a|mov|mkv|webm|mp3|opus|ogg|oga|wav|flac|aac|ts|m2ts|avi|flv|f4v|3gp|jpe?g|png|gif|webp|avif|m3u8|m3u|mpd|ism)$/i;

/**
 * `clip.mp4` + mp4 → `clip.mp4`; `master.m3u8` + mp4 → `master.mp4`; a bare extension keeps its
 * name. An extension that is not a plain token (or none) leaves the title as it is.
 */
export function mediaFilename(basename: string, ext: string | undefined): string {
  if (!ext || !/^[a-z0-9]{1,5}$/i.test(ext)) return basename;
  let title = basename.trim();
  while (MEDIA_EXTENSION.test(title)) {
    const shorter = title.replace(MEDIA_EXTENSION, '').trimEnd();
    if (shorter === '') break; // a title that is only an extension is still a name
    title = shorter;
  }
  return `${title || basename}.${ext.toLowerCase()}`;
}

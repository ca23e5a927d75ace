// @reelay/media: where ffmpeg is, what its commands are (pure builders), and how a run is supervised.
export * from './binaries.js';
export * from './clip.js';
export * from './containers.js';
export * from './inputs.js';
export * from './limits.js';
export * from './operations.js';
export * from './faststart.js';
export * from './mp4-info.js';
export * from './probe.js';
export * from './progress.js';
export * from './runner.js';
export * from './tags.js';
export * from './subtitles.js';
export * from './verify.js';
export * from './smartcut.js';
export * from './range-probe.js';

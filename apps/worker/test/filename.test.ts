import { expect, test } from '@jest/globals';
import { artifactFilename } from '../src/filename.js';

test('a title that already ends in a media or manifest extension gets the output extension once', () => {
  expect(artifactFilename('clip.mp4', 'mp4')).toBe('clip.mp4');
  expect(artifactFilename('master.m3u8', 'mp4')).toBe('master.mp4');
  expect(artifactFilename('manifest.MPD', 'mkv')).toBe('manifest.mkv');
  expect(artifactFilename('song.webm.mp3', 'mp3')).toBe('song.mp3');
});

test('other dots are part of the title, and a bare extension stays a name', () => {
  expect(artifactFilename('Episode 4.5', 'mp4')).toBe('Episode 4.5.mp4');
  expect(artifactFilename('my clip', 'mp4')).toBe('my clip.mp4');
  expect(artifactFilename('.mp4', 'mp4')).toBe('.mp4.mp4');
});

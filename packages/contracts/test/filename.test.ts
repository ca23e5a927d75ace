import { expect, test } from '@jest/globals';
import { mediaFilename } from '../src/filename.js';

test('a title that already ends in a media, image or manifest extension gets the delivered extension once', () => {
  expect(mediaFilename('clip.mp4', 'mp4')).toBe('clip.mp4');
  expect(mediaFilename('poster.jpg', 'jpg')).toBe('poster.jpg');
  expect(mediaFilename('poster.JPEG', 'jpg')).toBe('poster.jpg');
  expect(mediaFilename('pair.mpd', 'mp4')).toBe('pair.mp4');
  expect(mediaFilename('master.m3u8', 'mp4')).toBe('master.mp4');
  expect(mediaFilename('manifest.MPD', 'mkv')).toBe('manifest.mkv');
  expect(mediaFilename('song.webm.mp3', 'mp3')).toBe('song.mp3');
  expect(mediaFilename('clip', 'MP4')).toBe('clip.mp4');
});

test('other dots are part of the title, and a bare extension stays a name', () => {
  expect(mediaFilename('Episode 4.5', 'mp4')).toBe('Episode 4.5.mp4');
  expect(mediaFilename('my clip', 'mp4')).toBe('my clip.mp4');
  expect(mediaFilename('.mp4', 'mp4')).toBe('.mp4.mp4');
});

test('without a plain extension the title is the name', () => {
  expect(mediaFilename('clip.mp4', undefined)).toBe('clip.mp4');
  expect(mediaFilename('clip', 'x/../y')).toBe('clip');
});

# yt-dlp's own parsers on a batch of documents, for ytdlp-differential.test.ts: reads
# [{id, kind, url, text}] as JSON on stdin and writes {id: {formats, subtitles} | {error}} on stdout.
# It calls InfoExtractor's private parsing methods on the text it is given, so nothing is fetched:
# where _parse_html5_media_entries would download a manifest, the manifest's URL is recorded instead.
import json
import sys

from yt_dlp import YoutubeDL
from yt_dlp.compat import compat_etree_fromstring
from yt_dlp.extractor.common import InfoExtractor
from yt_dlp.utils import base_url, determine_ext


class Parsers(InfoExtractor):
    IE_NAME = 'differential'

    def _extract_m3u8_formats(self, m3u8_url, *args, **kwargs):
        return [{'url': m3u8_url, 'manifest': 'hls'}]

    def _extract_mpd_formats(self, mpd_url, *args, **kwargs):
        return [{'url': mpd_url, 'manifest': 'dash'}]


FIELDS = ('url', 'format_id', 'protocol', 'manifest_url', 'manifest', 'width', 'height', 'tbr', 'vcodec', 'acodec', 'language')


def plain(f):
    out = {k: f.get(k) for k in FIELDS if f.get(k) is not None}
    if f.get('fragments') is not None:
        out['segmented'] = True
    # has_drm is a re.Match in the HLS parser.
    if f.get('has_drm'):
        out['has_drm'] = True
    return out


def subtitles(subs):
    return {lang: [s.get('url') for s in entries] for lang, entries in (subs or {}).items()}


def parse(ie, case):
    kind, url, text = case['kind'], case['url'], case['text']
    if kind == 'hls':
        formats, subs = ie._parse_m3u8_formats_and_subtitles(text, url, ext='mp4', m3u8_id='hls')
    elif kind == 'dash':
        formats, subs = ie._parse_mpd_formats_and_subtitles(compat_etree_fromstring(text.encode('utf-8')), mpd_base_url=base_url(url), mpd_url=url)
    elif kind == 'html5':
        entries = ie._parse_html5_media_entries(url, text, 'case')
        formats = [f for e in entries for f in e['formats']]
        subs = {}
        for e in entries:
            for lang, tracks in e['subtitles'].items():
                subs.setdefault(lang, []).extend(tracks)
    elif kind == 'jsonld':
        info = ie._search_json_ld(text, 'case', default={})
        formats = [info] if info.get('url') else []
        # The generic extractor expands a JSON-LD manifest URL later, by its extension or encodingFormat.
        for f in formats:
            kind = {'m3u8': 'hls', 'mpd': 'dash'}.get(f.get('ext') or determine_ext(f['url']))
            if kind:
                f['manifest'] = kind
        subs = {}
    else:
        raise ValueError(f'unknown kind {kind}')
    return {'formats': [plain(f) for f in formats], 'subtitles': subtitles(subs)}


def main():
    cases = json.load(sys.stdin)
    ie = Parsers(YoutubeDL({'quiet': True, 'no_warnings': True}))
    results = {}
    for case in cases:
        try:
            results[case['id']] = parse(ie, case)
        except Exception as err:  # one case's failure is that case's result, not the batch's
            results[case['id']] = {'error': f'{type(err).__name__}: {err}'}
    json.dump({'version': __import__('yt_dlp').version.__version__, 'results': results}, sys.stdout)


main()

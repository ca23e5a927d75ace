#!/usr/bin/env node
// The `reelay` command: arguments by commander, exit status 0 on success, 1 on an error (the
// server's message printed), 2 on a usage error, 130 after Ctrl-C (which stops at once).
import fs from 'node:fs';
import path from 'node:path';
import { styleText } from 'node:util';
import type { Quality } from '@reelay/contracts';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { Api } from './api.js';
import { AUDIO_FORMATS, VIDEO_FORMATS, parseQuality } from './choose.js';
import { CliError, UsageError } from './errors.js';
import { get, type Interrupt } from './get.js';
import { interruptHandler } from './interrupt.js';
import {
  parseClip,
  parseDuration,
  parseItems,
  parsePage,
  parseServer,
  parseSourceNumber,
  parseUrl,
  type ClipOption,
  type ItemSelection,
} from './options.js';
import { collectionHints, extractText, jobText, shellWord } from './show.js';

const version = (
  JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
const controller = new AbortController();
const stopped: Interrupt = {};
// Colour only on a terminal that wants it: hasColors() honours NO_COLOR, FORCE_COLOR and TERM=dumb.
const colour = process.stderr.isTTY && process.stderr.hasColors();
const say = (line: string) => process.stderr.write(`reelay: ${line}\n`);
const out = (text: string) => process.stdout.write(text);

/** commander's argument parsers report a usage error through InvalidArgumentError. */
const usage =
  <T>(parse: (raw: string) => T) =>
  (raw: string): T => {
    try {
      return parse(raw);
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  };

const program = new Command('reelay')
  .description('Extract and download media through a reelay server.')
  .version(version)
  .addOption(new Option('--server <url>', 'the reelay server').env('REELAY_SERVER').default('http://127.0.0.1:8080'))
  .exitOverride()
  .configureOutput({ outputError: (text, write) => write(`reelay: ${text}`) })
  .showHelpAfterError('(add --help for usage)')
  .addHelpText(
    'after',
    `
Examples:
  reelay get https://example.com/watch/123      download the best video and audio
  reelay extract https://example.com/watch/123  see what there is, numbered
  reelay extract https://example.com/feed.xml   a playlist or feed: its entries, numbered
  reelay job <id>                               where a download job stands
  reelay get --help                             every option of get, with examples`,
  );

/**
 * The folder the person ran the command from. `pnpm reelay …` runs the root package's script from the
 * repository root and names the caller's folder in INIT_CWD; taken only for that script, so a reelay
 * started by some other script in a folder of its own still saves where it was started.
 */
function callerDir(): string {
  const init = process.env.INIT_CWD;
  const fromScript = process.env.npm_lifecycle_event === 'reelay' && init !== undefined && path.isAbsolute(init);
  return fromScript && fs.statSync(init, { throwIfNoEntry: false })?.isDirectory() ? init : process.cwd();
}

const GET_EXAMPLES = `
Examples:
  reelay get https://example.com/watch/123              best video and audio, saved here
  reelay get https://example.com/watch/123 -q 720p      at most 720 lines
  reelay get https://example.com/watch/123 -x -f mp3    the audio only, as mp3
  reelay get https://example.com/watch/123 --clip 1:30-2:00,precise
  reelay get https://example.com/gallery --items all    every item of a gallery (or --items 1,3-5)
  reelay get https://example.com/feed.xml --items 1-3   entries 1 to 3 of a playlist or feed
  reelay get https://example.com/watch/123 --source 2   source 2 as \`reelay extract\` numbers them
  reelay get https://example.com/watch/123 -o ~/Videos/
  reelay get https://example.com/live/channel           record a live stream until Ctrl-C, then save it
  reelay get https://example.com/live/channel --duration 30m --from-start
`;

const api = (cmd: Command) => new Api(parseServer(cmd.optsWithGlobals<{ server: string }>().server), controller.signal);

program
  .command('get')
  .description(
    "Download the best video and audio (or the asked quality or format) and save it under the server's filename, in the folder the command was run from; prints the saved path. A file already there is reported and not fetched again.",
  )
  .argument('<url>', 'a page or media URL (http or https)', usage(parseUrl))
  .addOption(
    new Option('-f, --format <format>', 'convert to this format (mp3 etc.: audio only)').choices([
      ...VIDEO_FORMATS,
      ...AUDIO_FORMATS,
    ]),
  )
  .addOption(
    new Option(
      '-q, --quality <quality>',
      'the best at or below this height: best, worst, 2160p, 1440p, 1080p, 720p, 480p, 360p, 240p',
    )
      .default('best')
      .argParser(usage(parseQuality)),
  )
  .option('-x, --audio-only', 'the best audio alone (with -f: mp3, m4a, opus or wav)')
  .addOption(
    new Option(
      '--clip <start-end[,mode]>',
      'only this part, e.g. 1:30-2:00; add ,precise for an exact cut (re-encoded) instead of the fast one from the keyframe before',
    ).argParser(usage(parseClip)),
  )
  .addOption(
    new Option(
      '--subs <langs>',
      'embed these subtitle languages, e.g. en,fr (sent as `subtitles`; a server without subtitles answers an error)',
    ).argParser((raw) =>
      raw
        .split(',')
        .map((l) => l.trim())
        .filter(Boolean),
    ),
  )
  .addOption(
    new Option(
      '--items <which>',
      'which items of a gallery, or entries of a playlist or feed, numbered as `reelay extract` lists them: all, or numbers from 1 such as 1,3-5 (default: the first item of a gallery, every entry of a playlist or feed)',
    ).argParser(usage(parseItems)),
  )
  .addOption(
    new Option(
      '--source <n>',
      'this source of the item, numbered as `reelay extract` shows them, instead of the best',
    ).argParser(usage(parseSourceNumber)),
  )
  .option('-o, --output <path>', 'save as this file, or into this folder')
  .addOption(
    new Option(
      '--duration <time>',
      'a live stream: record this long, e.g. 90, 30m, 1h30m (default: until Ctrl-C or the stream ends)',
    ).argParser(usage(parseDuration)),
  )
  .option('--from-start', 'a live stream: start at the oldest segment its playlist still lists, not the live edge')
  .addHelpText('after', GET_EXAMPLES)
  .action(
    async (
      url: string,
      options: {
        format?: string;
        quality: Quality;
        audioOnly?: boolean;
        clip?: ClipOption;
        subs?: string[];
        items?: ItemSelection;
        source?: number;
        output?: string;
        duration?: number;
        fromStart?: boolean;
      },
      cmd: Command,
    ) => {
      if (options.source !== undefined && (options.items === 'all' || (options.items?.length ?? 1) > 1))
        throw new UsageError('--source picks a source of one item: name the item with --items N.');
      if (options.audioOnly && options.format && VIDEO_FORMATS.includes(options.format))
        throw new UsageError(`--audio-only writes audio: give -f mp3, m4a, opus or wav, not ${options.format}.`);
      const saved = await get(api(cmd), url, { ...options, dir: callerDir() }, say, stopped);
      for (const file of saved) {
        if (file.already) say(`${file.path} has already been downloaded`);
        // On a terminal the path on stdout says it already; piped, the person still hears where it went.
        else if (!process.stdout.isTTY) say(`saved ${file.path}`);
        out(`${file.path}\n`);
      }
    },
  );

program
  .command('extract')
  .description(
    "Show the media a page holds: a table (items and sources numbered for --items and --source), or the server's JSON with --json. A playlist, channel or feed lists its entries, numbered for --items, 100 a page.",
  )
  .argument('<url>', 'a page or media URL (http or https)', usage(parseUrl))
  .option('--json', 'print the extract result as JSON')
  .addOption(
    new Option('--page <n>', 'a playlist, channel or feed: this page of its entries (100 a page)').argParser(
      usage(parsePage),
    ),
  )
  .action(async (url: string, options: { json?: boolean; page?: number }, cmd: Command) => {
    const client = api(cmd);
    const page = options.page ?? 1;
    let result = await client.extract(url);
    // The API pages with a cursor each page hands out: page N is N-1 cursors on from the first.
    for (let at = 1; at < page; at += 1) {
      const next = result.collection?.next_cursor;
      if (!next)
        throw new CliError(
          result.content_type === 'collection'
            ? `there is no page ${page}: this ${result.collection?.kind ?? 'collection'} has ${at} page${at === 1 ? '' : 's'}.`
            : `there is no page ${page}: this is no playlist, channel or feed, so it has one page.`,
          `See the first with \`reelay extract ${shellWord(url)}\`.`,
        );
      result = await client.extract(url, next);
    }
    out(options.json ? `${JSON.stringify(result, null, 2)}\n` : extractText(result));
    if (!options.json) for (const hint of collectionHints(url, result, page)) say(hint);
  });

program
  .command('job')
  .description('Show a download job: status, progress, error or file; --cancel cancels it first.')
  .argument('<id>', 'the job id that `reelay get` or POST /api/v1/download gave')
  .option('--json', 'print the job as JSON')
  .option('--cancel', 'cancel the job (queued or processing) and show it; exit 1 if it had already ended')
  // Job ids are base64url and may begin with "-": such an id is the argument, not an unknown option.
  .allowUnknownOption()
  .action(async (id: string, options: { json?: boolean; cancel?: boolean }, cmd: Command) => {
    const client = api(cmd);
    if (options.cancel) {
      await client.cancel(id);
      say(`cancelled job ${id}`);
    }
    const job = await client.job(id);
    out(options.json ? `${JSON.stringify(job, null, 2)}\n` : jobText(job));
  });

function fail(err: CliError, code: number): never {
  const label = colour ? styleText('red', 'error', { stream: process.stderr }) : 'error';
  process.stderr.write(`reelay: ${label}: ${err.message}${err.detail ? ` (${err.detail})` : ''}\n`);
  if (err.hint) say(err.hint);
  process.exit(code);
}

process.on('SIGINT', interruptHandler({ stopped, controller, exit: (code) => process.exit(code) }));
// `reelay … | head` closes stdout early: nothing left to say.
process.stdout.on('error', () => process.exit(0));

try {
  await program.parseAsync(process.argv);
  process.exit(0);
} catch (err) {
  if (controller.signal.aborted) {
    process.stderr.write('\nreelay: stopped.\n');
    if (stopped.hint) say(stopped.hint);
    process.exit(130);
  }
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
  if (err instanceof UsageError) fail(new UsageError(err.message, err.hint ?? 'See `reelay --help`.'), 2);
  if (err instanceof CliError) fail(err, 1);
  fail(
    new CliError(
      (err as Error).message ?? String(err),
      'This looks like a bug in reelay; please report it with the command you ran.',
    ),
    1,
  );
}

#!/usr/bin/env node
// The `reelay` command: arguments by commander, exit status 0 on success, 1 on an error (the
// server's message printed), 2 on a usage error, 130 after Ctrl-C (which stops at once).
import fs from 'node:fs';
import { styleText } from 'node:util';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { Api } from './api.js';
import { AUDIO_FORMATS, VIDEO_FORMATS, parseQuality } from './choose.js';
import { CliError, UsageError } from './errors.js';
import { get } from './get.js';
import { parseClip, parseServer } from './options.js';
import { extractText, jobText } from './show.js';

const version = (JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const controller = new AbortController();
const stopped: { hint?: string } = {};
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
  .showHelpAfterError('(add --help for usage)');

const api = (cmd: Command) => new Api(parseServer(cmd.optsWithGlobals<{ server: string }>().server), controller.signal);

program
  .command('get')
  .description('Download the best video and audio (or the asked quality or format) and save it under the server\'s filename; prints the saved path.')
  .argument('<url>', 'a page or media URL')
  .addOption(new Option('-f, --format <format>', 'convert to this format (mp3 etc.: audio only)').choices([...VIDEO_FORMATS, ...AUDIO_FORMATS]))
  .addOption(new Option('-q, --quality <quality>', 'the best at or below this height, e.g. 720p').default('best').argParser(usage((raw) => (parseQuality(raw), raw))))
  .addOption(new Option('--clip <start-end>', 'only this part, e.g. 1:30-2:00 (sent as `clip`; a server without clips answers an error)').argParser(usage(parseClip)))
  .addOption(new Option('--subs <langs>', 'embed these subtitle languages, e.g. en,fr (sent as `subtitles`; a server without subtitles answers an error)').argParser((raw) => raw.split(',').map((l) => l.trim()).filter(Boolean)))
  .option('-o, --output <path>', 'save as this file, or into this folder')
  .action(async (url: string, options: { format?: string; quality: string; clip?: { start: number; end: number }; subs?: string[]; output?: string }, cmd: Command) => {
    const saved = await get(api(cmd), url, options, say, stopped);
    // On a terminal the path on stdout says it already; piped, the person still hears where it went.
    if (!process.stdout.isTTY) say(`saved ${saved}`);
    out(`${saved}\n`);
  });

program
  .command('extract')
  .description('Show the media a page holds: a table, or the server\'s JSON with --json.')
  .argument('<url>', 'a page or media URL')
  .option('--json', 'print the extract result as JSON')
  .action(async (url: string, options: { json?: boolean }, cmd: Command) => {
    const result = await api(cmd).extract(url);
    out(options.json ? `${JSON.stringify(result, null, 2)}\n` : extractText(result));
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

process.once('SIGINT', () => {
  controller.abort();
  // A second Ctrl-C does not wait for any clean-up.
  process.once('SIGINT', () => process.exit(130));
});
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
  fail(new CliError((err as Error).message ?? String(err), 'This looks like a bug in reelay; please report it with the command you ran.'), 1);
}

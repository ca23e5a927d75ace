// pnpm bench: every benchmark in turn, each printing its figures next to a baseline measured in the
// same run.
import { benchDirectDownload } from './download.mjs';
import { benchExtract } from './extract.mjs';

await benchExtract();
await benchDirectDownload();

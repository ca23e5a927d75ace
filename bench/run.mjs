// pnpm bench: every benchmark in turn, each printing its figures next to a baseline measured in the
// same run.
import { benchDirectDownload } from './download.mjs';
import { benchExtract } from './extract.mjs';
import { benchJobs } from './jobs.mjs';
import { benchQueue } from './queue.mjs';
import { benchScale } from './scale.mjs';
import { benchSurfaceA } from './surface-a.mjs';

await benchExtract();
await benchSurfaceA();
await benchDirectDownload();
await benchJobs();
await benchQueue();
await benchScale();

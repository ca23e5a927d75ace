// pnpm bench: every benchmark in turn, each printing its figures next to a baseline measured in the
// same run.
import { benchClipAccuracy } from './clip-accuracy.mjs';
import { benchCollection } from './collection.mjs';
import { benchDirectDownload } from './download.mjs';
import { benchEvents } from './events.mjs';
import { benchExtract } from './extract.mjs';
import { benchJobs } from './jobs.mjs';
import { benchOriginJobs } from './origin-jobs.mjs';
import { benchQueue } from './queue.mjs';
import { benchRecord } from './record.mjs';
import { benchRedisCost } from './redis-cost.mjs';
import { benchScale } from './scale.mjs';
import { benchShortMerge } from './short-merge.mjs';
import { benchSmartCut } from './smart-cut.mjs';
import { benchSurfaceA } from './surface-a.mjs';
import { benchWebApp } from './web-app.mjs';

await benchExtract();
await benchSurfaceA();
await benchDirectDownload();
await benchJobs();
await benchShortMerge();
await benchClipAccuracy();
await benchSmartCut();
await benchOriginJobs();
await benchCollection();
await benchQueue();
await benchEvents();
await benchScale();
await benchWebApp();
await benchRedisCost();
await benchRecord();

// A jest reporter that writes each test file's duration the moment the file ends, one tab-separated
// line (seconds, tests passed, tests failed, path) appended to the file $REELAY_TEST_TIMINGS names;
// without it, nothing. The lines survive a run that is stopped half-way, which a loaded, shared
// machine makes likely; scripts/slowest-tests.mjs ranks them. jest.config.js lists it, so:
//   REELAY_TEST_TIMINGS=/tmp/t.tsv pnpm test; node scripts/slowest-tests.mjs /tmp/t.tsv
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export default class TestTimings {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.file = process.env.REELAY_TEST_TIMINGS;
  }

  onRunStart() {
    if (!this.file) return;
    fs.appendFileSync(
      this.file,
      `# run started ${new Date().toISOString()}, load ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}\n`,
    );
  }

  onTestResult(_test, result) {
    if (!this.file) return;
    const seconds = (result.perfStats.end - result.perfStats.start) / 1000;
    const name = path.relative(this.rootDir, result.testFilePath);
    fs.appendFileSync(
      this.file,
      `${seconds.toFixed(3)}\t${result.numPassingTests}\t${result.numFailingTests + (result.testExecError ? 1 : 0)}\t${name}\n`,
    );
  }

  onRunComplete() {
    if (!this.file) return;
    fs.appendFileSync(
      this.file,
      `# run ended ${new Date().toISOString()}, load ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}\n`,
    );
  }
}

// Per-job temporary folders on local disk. Every store keeps them locally (ffmpeg writes files, even
// when the result then goes to S3); the folder name starts with the job id so a retry finds and
// removes a dead attempt's leftovers.
import fs from 'node:fs/promises';
import path from 'node:path';
import { JOB_ID_PATTERN } from '@reelay/contracts';

export class LocalTemp {
  constructor(readonly tempDir: string) {}

  async makeTempDir(id: string): Promise<string> {
    if (!JOB_ID_PATTERN.test(id)) throw new Error(`invalid job id ${JSON.stringify(id)}`);
    await fs.mkdir(this.tempDir, { recursive: true });
    return fs.mkdtemp(path.join(this.tempDir, `${id}-`));
  }

  async removeTempDir(dir: string): Promise<void> {
    // Only folders this store made: a wrong path must never turn into a recursive delete elsewhere.
    if (path.dirname(path.resolve(dir)) !== path.resolve(this.tempDir))
      throw new Error(`not a temporary folder of this store: ${dir}`);
    await fs.rm(dir, { recursive: true, force: true });
  }

  async removeTemp(id: string): Promise<number> {
    if (!JOB_ID_PATTERN.test(id)) throw new Error(`invalid job id ${JSON.stringify(id)}`);
    // mkdtemp appends exactly six characters after the dash.
    const mine = (await listOrNone(this.tempDir)).filter(
      (name) => name.length === id.length + 7 && name.startsWith(`${id}-`),
    );
    for (const name of mine) await fs.rm(path.join(this.tempDir, name), { recursive: true, force: true });
    return mine.length;
  }

  async cleanTemp(maxAgeMs: number): Promise<number> {
    const entries = await listOrNone(this.tempDir);
    let removed = 0;
    const now = Date.now();
    for (const name of entries) {
      const full = path.join(this.tempDir, name);
      const stat = await fs.stat(full).catch(() => undefined);
      if (stat && now - stat.mtimeMs > maxAgeMs) {
        await fs.rm(full, { recursive: true, force: true });
        removed++;
      }
    }
    return removed;
  }
}

/** A directory's entries; none when it does not exist yet (nothing was ever stored). */
export async function listOrNone(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

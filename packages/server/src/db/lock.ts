import fs from "node:fs";
import path from "node:path";

/**
 * An embedded database directory may be opened by one process only: two would
 * corrupt it. The lock file holds the owner's pid; a lock left by a process that
 * no longer exists is taken over.
 */
export class DataDirLock {
  private constructor(private readonly file: string) {}

  static acquire(dataDir: string): DataDirLock {
    fs.mkdirSync(dataDir, { recursive: true });
    const file = path.join(dataDir, "server.lock");
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        fs.writeFileSync(file, String(process.pid), { flag: "wx" });
        return new DataDirLock(file);
      } catch (error) {
        if (!isExists(error)) throw error;
        const owner = Number.parseInt(fs.readFileSync(file, "utf8"), 10);
        if (Number.isInteger(owner) && owner !== process.pid && isAlive(owner)) {
          throw new Error(
            `The embedded database in ${dataDir} is in use by process ${owner}. ` +
              "Stop it, or point DATA_DIR elsewhere, or set DATABASE_URL to share a PostgreSQL between processes.",
            { cause: error },
          );
        }
        fs.rmSync(file, { force: true });
      }
    }
    throw new Error(`Could not lock ${file}`);
  }

  release(): void {
    try {
      if (fs.readFileSync(this.file, "utf8") === String(process.pid)) fs.rmSync(this.file, { force: true });
    } catch {
      // Already gone: nothing to release.
    }
  }
}

function isExists(error: unknown): boolean {
  return error instanceof Error && "code" in error && error.code === "EEXIST";
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error instanceof Error && "code" in error && error.code === "EPERM";
  }
}

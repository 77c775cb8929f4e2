import { execFile } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type pg from "pg";

const run = promisify(execFile);

/** PostgreSQL's programs on this machine (Debian's layout), the newest version installed. */
function binDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!fs.existsSync(root)) return undefined;
  const versions = fs.readdirSync(root).sort((a, b) => Number(b) - Number(a));
  return versions.map((version) => path.join(root, version, "bin")).find((dir) => fs.existsSync(path.join(dir, "initdb")));
}

/**
 * A throw-away PostgreSQL cluster of the test's own, on its own port and data
 * directory: stopping, crashing and freezing it touches nothing else. Run as
 * the `postgres` user when the tests run as root (PostgreSQL refuses root).
 */
export type Cluster = {
  url: string;
  /** The server's log file (gone once the cluster is destroyed). */
  log: string;
  restart(): Promise<void>;
  stop(mode: "fast" | "immediate"): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP (or SIGCONT) every process of the cluster: a server that stops answering without closing anything. */
  freeze(): Promise<void>;
  thaw(): Promise<void>;
  destroy(): Promise<void>;
};

export function clusterUnavailableReason(): string | undefined {
  if (!binDir()) return "no PostgreSQL programs under /usr/lib/postgresql";
  if (process.getuid?.() === 0 && !fs.existsSync("/usr/sbin/runuser")) return "running as root without runuser";
  return undefined;
}

/** A TCP port free on loopback at this moment. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });

/** Why a fault test cannot run here (then skipped, loudly), or undefined; under CI (`ci`) it cannot be skipped. */
export function faultTestsUnavailable(ci: boolean): string | undefined {
  const reason = clusterUnavailableReason();
  if (reason && ci) throw new Error(`Fault tests cannot run: ${reason}`);
  if (reason) console.warn(`\n*** FAULT TESTS SKIPPED: ${reason} ***\n`);
  return reason;
}

/** `settings`: more server settings (`-c name=value`), for example what the server logs. */
export async function createCluster(port: number, settings: Record<string, string> = {}): Promise<Cluster> {
  const bin = binDir();
  if (!bin) throw new Error("no PostgreSQL programs");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "faults-pg-"));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) await run("chown", ["postgres:postgres", dir]);
  const pg = (program: string, args: string[]) =>
    asRoot ? run("/usr/sbin/runuser", ["-u", "postgres", "--", path.join(bin, program), ...args]) : run(path.join(bin, program), args);
  const data = path.join(dir, "data");
  await pg("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60${Object.entries(settings)
    .map(([name, value]) => ` -c ${name}=${value}`)
    .join("")}`;
  const start = async () => void (await pg("pg_ctl", ["-D", data, "-o", options, "-l", path.join(dir, "log"), "-w", "start"]));
  await start();

  /** The postmaster and its children: every process of the cluster. */
  const processes = async (): Promise<number[]> => {
    const postmaster = Number(fs.readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]);
    const { stdout } = await run("pgrep", ["-P", String(postmaster)]).catch(() => ({ stdout: "" }));
    return [postmaster, ...stdout.split("\n").filter(Boolean).map(Number)];
  };
  const send = (pid: number, name: NodeJS.Signals) => {
    try {
      process.kill(pid, name);
    } catch {
      // a backend that just ended
    }
  };
  const signal = async (name: "SIGSTOP" | "SIGCONT") => {
    if (name === "SIGCONT") {
      for (const pid of await processes()) send(pid, name);
      return;
    }
    // The postmaster first, so it forks no backend that a list taken before would miss; then its children until
    // a pass finds none new (a fork under way when the postmaster stopped still completes).
    const [postmaster, ...children] = await processes();
    if (postmaster !== undefined) send(postmaster, name);
    const stopped = new Set<number>();
    for (let pending = children; pending.length > 0; pending = (await processes()).slice(1).filter((pid) => !stopped.has(pid))) {
      for (const pid of pending) {
        send(pid, name);
        stopped.add(pid);
      }
    }
  };

  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    log: path.join(dir, "log"),
    restart: async () => void (await pg("pg_ctl", ["-D", data, "-o", options, "-l", path.join(dir, "log"), "-w", "-m", "fast", "restart"])),
    stop: async (mode) => void (await pg("pg_ctl", ["-D", data, "-w", "-m", mode, "stop"])),
    start,
    freeze: () => signal("SIGSTOP"),
    thaw: () => signal("SIGCONT"),
    async destroy() {
      await signal("SIGCONT").catch(() => undefined);
      await pg("pg_ctl", ["-D", data, "-w", "-m", "immediate", "stop"]).catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Jobs not finished yet (pending or running): 0 once the workers have drained what a load left. */
export async function unfinishedJobs(db: pg.Client): Promise<number> {
  const { rows } = await db.query<{ n: string }>("select count(*) as n from automation_jobs where status in ('pending', 'running')");
  return Number(rows[0]?.n);
}

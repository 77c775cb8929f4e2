import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { LISTENER_NAME, type DatabaseHandle, type Notice } from "../db/index.js";
import type { Logger } from "../logger.js";
import { onAccessChange } from "./access-events.js";
import type { findKeyAccess } from "./tenant.repository.js";

export type KeyAccess = Awaited<ReturnType<typeof findKeyAccess>>;

/** How long a change waits for every process to say it has forgotten, before it answers anyway. */
export const ACCESS_SYNC_MS = 2_000;

/** Only a granted access is remembered: a refusal (unknown key, store missing, paused or another team's) is read afresh each time. */
function grants(access: KeyAccess): access is NonNullable<KeyAccess> {
  return (
    access !== undefined &&
    access.store_id !== null &&
    !access.store_paused &&
    access.store_team_id === access.key_team_id &&
    (access.key_store_id === null || access.key_store_id === access.store_id)
  );
}

/**
 * Who may push to which store, remembered per process so a push costs no
 * lookup of its key. The database says when to forget: a trigger notifies
 * `access_changed` at the commit of any change to stores or keys (a key
 * deleted, a store paused), and every process clears its cache then. The
 * cache serves only while that notification channel is up; a short TTL is the
 * safety net on top. Only granted access is cached: a refusal is always read
 * afresh, so a store resumed or created is reachable on the very next request.
 */
export class AccessCache {
  readonly #entries = new Map<string, { access: NonNullable<KeyAccess>; expires: number }>();
  #generation = 0;
  #live = false;
  hits = 0;
  misses = 0;

  constructor(
    private readonly ttlMs = 30_000,
    private readonly maxEntries = 10_000,
  ) {}

  /** Whether the change notifications arrive: without them nothing is served from memory. */
  setLive(live: boolean): void {
    this.#live = live;
    this.clear();
  }

  /** Everything changed: forget it all, including lookups in flight. */
  clear(): void {
    this.#generation++;
    this.#entries.clear();
  }

  /** A change notification arrived from the database. */
  notified(): void {
    this.clear();
  }

  /** Whether anything is served from memory. */
  get live(): boolean {
    return this.#live;
  }

  async get(keyHash: string, storeId: number | undefined, load: () => Promise<KeyAccess>): Promise<KeyAccess> {
    const id = `${keyHash}:${storeId ?? ""}`;
    const entry = this.#live ? this.#entries.get(id) : undefined;
    if (entry && entry.expires > Date.now()) {
      this.hits++;
      return entry.access;
    }
    this.misses++;
    const generation = this.#generation;
    const access = await load();
    // A change notified while the lookup ran may not be in its answer: keep only answers read after the last change.
    if (grants(access) && this.#live && generation === this.#generation) {
      if (this.#entries.size >= this.maxEntries) this.#entries.delete(this.#entries.keys().next().value as string);
      // A rolled key is remembered no longer than it works.
      this.#entries.set(id, { access, expires: Math.min(Date.now() + this.ttlMs, access.key_expires_at?.getTime() ?? Number.POSITIVE_INFINITY) });
    }
    return access;
  }
}

const CHANGED = "access_changed";
const ACKED = "access_acked";

/**
 * Keeps `cache` true to the database, in every process at once.
 *
 * Each process listens on `access_changed` and clears its cache at every
 * notification. A change made through this process then waits for the others
 * before it is answered: it sends a notification of its own with a fresh
 * token, and waits until every listening connection (found by name in
 * `pg_stat_activity`) has echoed the token back on `access_acked`. PostgreSQL
 * delivers notifications in commit order, so a process that echoes the token
 * has already cleared for the change committed before it: the caller's next
 * request, to any process, reads the change. A process that does not answer
 * within {@link ACCESS_SYNC_MS} is not waited for (its TTL still bounds it).
 */
export async function startAccessSync(database: DatabaseHandle, cache: AccessCache, logger?: Logger): Promise<() => Promise<void>> {
  const waits = new Map<string, { acked: Set<number>; expected: number[] | undefined; settle: () => void }>();
  const check = (token: string) => {
    const wait = waits.get(token);
    if (wait?.expected?.every((pid) => wait.acked.has(pid))) wait.settle();
  };
  const hear = (notice: Notice) => {
    if (notice.channel === CHANGED) {
      cache.notified();
      if (notice.payload) notice.reply(ACKED, notice.payload);
    } else {
      waits.get(notice.payload)?.acked.add(notice.senderPid);
      check(notice.payload);
    }
  };
  const stopListening = await database.listen([CHANGED, ACKED], hear, (live) => cache.setLive(live));

  async function everyProcessTold(): Promise<void> {
    // One process alone on the embedded database: clearing here was all there was to do.
    if (database.kind !== "postgres" || !cache.live) return;
    const token = randomUUID();
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const wait = { acked: new Set<number>(), expected: undefined as number[] | undefined, settle };
    waits.set(token, wait);
    const timer = setTimeout(() => {
      logger?.warn({ missing: wait.expected?.filter((pid) => !wait.acked.has(pid)) }, "a process did not confirm an access change in time");
      settle();
    }, ACCESS_SYNC_MS);
    try {
      const { rows } = await sql<{ pids: number[] }>`
        select array(select pid from pg_stat_activity where application_name = ${LISTENER_NAME} and datname = current_database()) as pids,
               pg_notify(${CHANGED}, ${token})`.execute(database.db);
      wait.expected = rows[0]?.pids ?? [];
      check(token);
      await settled;
    } catch {
      // The change is written; without the database nobody can be told, and nobody serves from a cache whose channel is down for long.
    } finally {
      clearTimeout(timer);
      waits.delete(token);
    }
  }

  const stopHearingLocalChanges = onAccessChange(() => {
    cache.clear();
    return everyProcessTold();
  });
  return async () => {
    stopHearingLocalChanges();
    await stopListening();
  };
}

import type { Mailer } from "./accounts/mail.js";
import type { IncomingMessage } from "node:http";
import type { AccountSettings, SignInLimiters } from "./accounts/member.service.js";
import type { AccessCache, RateLimiter } from "./tenancy/access.js";
import type { Db } from "./db/types.js";
import type { AppError } from "./errors.js";
import type { Logger } from "./logger.js";

/** What the console's sign-in needs: its settings, its throttles, and whether cookies demand HTTPS. */
export type AccountServices = { settings: AccountSettings; limiters: SignInLimiters; cookieSecure: boolean; mailer: Mailer };

/** A request's `Idempotency-Key`, read (see `runOnce` in `records/procedures.ts`): the key and a fingerprint of the request, or a key that is not valid. */
export type IdempotencyRequest = { key: string; fingerprint: string } | { invalidKey: true };

/** How slow an upload may be before it is answered 408 (see `paced`). */
export type UploadPace = {
  /** The longest the client may send nothing while the service waits for it. */
  silenceMs: number;
  /** The least it must send, on average over each `windowMs` the service spends waiting for it. */
  minBytesPerSecond: number;
  windowMs: number;
  /** The longest an upload may take in all, from its first byte read to its last. */
  totalMs: number;
};

/** Uploads a process receives at once, and the chunks of them it stored (see `uploadSlots`). */
export type UploadSlots = { take(): (() => void) | undefined; readonly busy: number; readonly chunks: number; stored(): void };

export type ImportSettings = {
  /** The largest file, uncompressed. */
  uploadLimitBytes: number;
  /** The largest line (a push's body limit). */
  lineBytes: number;
  /** A chunk's bytes, as `UploadLimits.chunkBytes`. */
  chunkBytes: number;
  /** How slow an upload may be. */
  pace: UploadPace;
  /** The uploads this process receives at once. */
  slots: UploadSlots;
  /** How often a receiving upload says it is alive (see `heartbeatOf`). */
  heartbeatMs: number;
  nudge?: () => void;
};

export type Services = {
  db: Db;
  logger: Logger;
  rateLimiter: RateLimiter;
  /** Key and store lookups remembered in this process, forgotten at once on any change (see AccessCache). */
  accessCache?: AccessCache;
  /** Failed authentications per address: an address that keeps failing is slowed to 429s. */
  authFailures?: RateLimiter;
  adminToken: string;
  /** Whether the operator API and /metrics answer callers other than this machine. */
  adminRemote?: boolean;
  accounts: AccountServices;
  /** Imports' settings, and how to tell this process's import runner that one is queued. */
  imports?: ImportSettings;
  /** Stores' own messaging endpoints: a test event's timeout, and whether private addresses may be one. */
  endpoints?: { timeoutMs: number; allowPrivate: boolean };
  /** Called after a write succeeds, so an in-process worker picks up its jobs at once. */
  afterWrite?: () => void;
};

/** What a console request carries beyond tRPC's input: cookies, the caller's address, and whether it came from our own pages. */
export type ConsoleHttp = {
  cookie(name: string): string | undefined;
  setCookie(name: string, value: string, options: { maxAgeSeconds: number }): void;
  clearCookie(name: string): void;
  address: string;
  /** The browser's User-Agent, as sent (cut to 300 characters). */
  userAgent: string | null;
  /** False when the browser says the request came from another site (Origin or Sec-Fetch-Site). */
  sameOrigin: boolean;
};

export type Context = Services & {
  requestId: string;
  /** The raw `Authorization` header, absent when the caller sent none. */
  authorization: string | undefined;
  /** The caller's address, as the socket says. */
  address: string | undefined;
  /** What was wrong with the body, found before any procedure ran and reported after authorization. */
  bodyProblem: AppError | undefined;
  /** The JSON body as sent, without path parameters: what the shop API's body parser checks. */
  rawBody: Record<string, unknown> | undefined;
  /** `X-Backfill`: historical data, stored without triggering automations. */
  backfill: boolean;
  /** `Prefer: handling=strict`: fields the API does not know are refused rather than ignored. */
  strict: boolean;
  /**
   * Set by procedures as they go: the success status (201 on create, 204 on
   * delete), and the store and key a request was authorized for (for the
   * request log).
   */
  response: {
    status: number;
    headers?: Record<string, string>;
    authorized?: { storeId: number; keyId: number; logBodies?: boolean };
    /**
     * The team's own store and key a request named, known even when it was
     * refused (a key restricted to another store, a deleted key, a paused
     * store, the rate limit): the store's request log keeps those calls too.
     */
    caller?: { storeId: number; keyId: number };
    /** The record a write stored (its kind and key), for the request log. */
    record?: { kind: string; externalId: string };
  };
  /** Present on console requests only. */
  http?: ConsoleHttp;
  /** The request's `Idempotency-Key`, when it sent one. */
  idempotency?: IdempotencyRequest;
  /** A streamed upload's request, unread (see `ProcedureContract.upload`). */
  upload?: IncomingMessage;
};

/** Builds a request's context: the REST adapter (`app.ts`), the console and tests all come through here. */
export function createContextInner(
  services: Services,
  request: { requestId?: string; authorization?: string; address?: string | undefined; strict?: boolean; bodyProblem?: AppError | undefined; rawBody?: Record<string, unknown> | undefined; backfill?: boolean; http?: ConsoleHttp; idempotency?: IdempotencyRequest | undefined; upload?: IncomingMessage | undefined } = {},
): Context {
  // The services are spread last: on Node 20 an object literal that adds properties after a spread of a full
  // object builds a new hidden class per property each time (28 µs for this context, 0.4 µs in this order).
  return {
    requestId: request.requestId ?? crypto.randomUUID(),
    authorization: request.authorization,
    address: request.address,
    bodyProblem: request.bodyProblem,
    rawBody: request.rawBody,
    backfill: request.backfill ?? false,
    strict: request.strict ?? false,
    response: { status: 200 },
    http: request.http,
    idempotency: request.idempotency,
    upload: request.upload,
    ...services,
  };
}

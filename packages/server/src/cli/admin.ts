import fs from "node:fs";
import { parseArgs } from "node:util";
import type { Activity } from "@commerce-ingest/shared";
import { adminTokenFile } from "../tenancy/admin-token.js";
import { loadCliEnv } from "../env.js";

const USAGE = `Usage: pnpm admin <command>

  team create --name NAME
  team list
  store create --team ID --name NAME [--country CC] [--recovery-delay SECONDS]
  store update ID [--name NAME] [--country CC] [--recovery-delay SECONDS]
  store pause ID
  store resume ID
  store list [--team ID]
  key create --team ID --name NAME [--store ID]
  key list --team ID
  key delete ID
  member invite --team ID --email EMAIL     prints a one-time link to the console (valid 7 days)
  activity --store ID [--limit N] [--json]
                                            a store's automation runs and messages, newest first

Talks to the operator API at ADMIN_URL (default http://127.0.0.1:$PORT) with ADMIN_TOKEN,
or the token the server keeps in DATA_DIR/admin-token. Prints JSON on stdout, except
activity, which prints tables unless --json is given.`;

class UsageError extends Error {}

type Options = Record<string, string | undefined>;
type Call = { method: "GET" | "POST" | "PATCH" | "DELETE"; path: string; body?: Record<string, unknown>; render?: (body: unknown) => string };

function need(options: Options, name: string): string {
  const value = options[name];
  if (value === undefined || value === "") throw new UsageError(`--${name} is required`);
  return value;
}

function integer(value: string, what: string): number {
  if (!/^\d+$/.test(value)) throw new UsageError(`${what} must be a whole number, not "${value}"`);
  return Number(value);
}

function one(positionals: string[], what: string): string {
  const value = positionals[0];
  if (value === undefined) throw new UsageError(`${what} is required`);
  return value;
}

function storePatch(options: Options): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  if (options.name !== undefined) patch.name = options.name;
  if (options.country !== undefined) patch.country = options.country === "" ? null : options.country;
  if (options["recovery-delay"] !== undefined) patch.recovery_delay_seconds = integer(options["recovery-delay"], "--recovery-delay");
  return patch;
}

/** Turns the words of a command into the operator API call it stands for. */
export function toCall(args: string[]): Call {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      name: { type: "string" },
      team: { type: "string" },
      store: { type: "string" },
      country: { type: "string" },
      "recovery-delay": { type: "string" },
      limit: { type: "string" },
      email: { type: "string" },
      json: { type: "boolean" },
    },
  });
  const { json, ...strings } = values;
  const options = strings as Options;
  const [noun, verb, ...rest] = positionals;
  switch (`${noun ?? ""} ${verb ?? ""}`) {
    case "team create":
      return { method: "POST", path: "/admin/v1/teams", body: { name: need(options, "name") } };
    case "team list":
      return { method: "GET", path: "/admin/v1/teams" };
    case "store create":
      return {
        method: "POST",
        path: "/admin/v1/stores",
        body: { team_id: integer(need(options, "team"), "--team"), ...storePatch(options), name: need(options, "name") },
      };
    case "store update":
      return { method: "PATCH", path: `/admin/v1/stores/${integer(one(rest, "the store id"), "the store id")}`, body: storePatch(options) };
    case "store pause":
    case "store resume":
      return {
        method: "PATCH",
        path: `/admin/v1/stores/${integer(one(rest, "the store id"), "the store id")}`,
        body: { paused: verb === "pause" },
      };
    case "store list":
      return { method: "GET", path: options.team ? `/admin/v1/stores?team_id=${integer(options.team, "--team")}` : "/admin/v1/stores" };
    case "key create": {
      const body: Record<string, unknown> = { team_id: integer(need(options, "team"), "--team"), name: need(options, "name") };
      if (options.store !== undefined) body.store_id = integer(options.store, "--store");
      return { method: "POST", path: "/admin/v1/keys", body };
    }
    case "key list":
      return { method: "GET", path: `/admin/v1/keys?team_id=${integer(need(options, "team"), "--team")}` };
    case "member invite":
      return { method: "POST", path: "/admin/v1/invitations", body: { team_id: integer(need(options, "team"), "--team"), email: need(options, "email") } };
    case "key delete":
      return { method: "DELETE", path: `/admin/v1/keys/${integer(one(rest, "the key id"), "the key id")}` };
    case "activity ": {
      const limit = options.limit === undefined ? "" : `?limit=${integer(options.limit, "--limit")}`;
      const path = `/admin/v1/stores/${integer(need(options, "store"), "--store")}/activity${limit}`;
      return json ? { method: "GET", path } : { method: "GET", path, render: (body) => activityTables(body as Activity) };
    }
    default:
      throw new UsageError(noun ? `unknown command: ${positionals.join(" ")}` : "no command given");
  }
}

/** Rows as aligned columns under a header; empty cells as "-". */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "-").length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("  ").trimEnd();
  return [line(header), line(widths.map((width) => "-".repeat(width))), ...rows.map((row) => line(header.map((_, column) => row[column] || "-")))].join("\n");
}

/** "2026-11-22 09:30:05" from an ISO time: the operator reads times, not offsets. */
const shortTime = (iso: string | null) => (iso ? iso.slice(0, 19).replace("T", " ") : "");

/** A store's activity for a person: the runs, then the messages, newest first. */
export function activityTables(activity: Activity): string {
  const runs = formatTable(
    ["RUN", "FLOW", "RECORD", "STATUS", "TRIES", "DUE", "FINISHED", "ERROR"],
    activity.runs.map((run) => [
      String(run.id),
      run.flow,
      `${run.record_type} ${run.record_external_id}`,
      run.status,
      String(run.attempts),
      shortTime(run.run_at),
      shortTime(run.finished_at),
      run.error ?? "",
    ]),
  );
  const messages = formatTable(
    ["MESSAGE", "RUN", "FLOW", "TO", "STATUS", "PROVIDER", "SENT"],
    activity.messages.map((message) => [message.id, String(message.run_id), message.flow, message.to_phone ?? "", message.status, message.provider, shortTime(message.sent_at)]),
  );
  return `Automation runs (${activity.runs.length})\n${runs}\n\nMessages (${activity.messages.length})\n${messages}`;
}

function readToken(): string {
  const env = loadCliEnv();
  if (env.adminToken) return env.adminToken;
  try {
    return fs.readFileSync(adminTokenFile(env.dataDir), "utf8").trim();
  } catch {
    throw new UsageError(`no ADMIN_TOKEN set and no ${adminTokenFile(env.dataDir)}: start the server first, or set ADMIN_TOKEN`);
  }
}

/** Runs one admin command; resolves to the process exit code (2 for usage, 1 for a refused or failed call). */
export async function runAdmin(args: string[]): Promise<number> {
  if (args.length === 0 || args.includes("--help") || args.includes("-h")) {
    console.log(USAGE);
    return args.length === 0 ? 2 : 0;
  }
  let call: Call;
  let token: string;
  try {
    call = toCall(args);
    token = readToken();
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && "code" in error)) {
      console.error(`admin: ${error.message}\n\n${USAGE}`);
      return 2;
    }
    throw error;
  }
  const { adminUrl } = loadCliEnv();
  let response: Response;
  try {
    response = await fetch(new URL(call.path, adminUrl), {
      method: call.method,
      headers: { Authorization: `Bearer ${token}`, ...(call.body ? { "Content-Type": "application/json" } : {}) },
      body: call.body ? JSON.stringify(call.body) : undefined,
    });
  } catch (error) {
    console.error(`admin: cannot reach the server at ${adminUrl}: ${error instanceof Error ? (error.cause as Error | undefined)?.message ?? error.message : String(error)}`);
    return 1;
  }
  const text = await response.text();
  if (!response.ok) {
    console.error(`admin: ${response.status} ${text}`);
    return 1;
  }
  console.log(response.status === 204 ? JSON.stringify({ ok: true }) : call.render ? call.render(JSON.parse(text)) : text);
  return 0;
}


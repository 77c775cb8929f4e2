import type { CheckoutStatus, Flow, JobStatus, MessageStatus, ShipmentStatus } from "@commerce-ingest/shared";
import type { ColumnType, Generated, Kysely, Selectable, Transaction } from "kysely";

type CreatedAt = ColumnType<Date, never, never>;
type UpdatedAt = ColumnType<Date, Date | string | undefined, Date | string>;

export interface TeamTable {
  id: Generated<number>;
  name: string;
  created_at: CreatedAt;
  require_two_factor: Generated<boolean>;
}

export interface StoreTable {
  id: Generated<number>;
  team_id: number;
  name: string;
  country: string | null;
  recovery_delay_seconds: Generated<number>;
  paused: Generated<boolean>;
  /** False: its calls keep no bodies in the request log (refused calls keep theirs). */
  log_bodies: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface ApiKeyTable {
  id: Generated<number>;
  team_id: number;
  store_id: number | null;
  name: string;
  key_hash: string;
  last4: string;
  /** The member who created it in the console; null for keys made by an operator. */
  created_by: number | null;
  /** When the key last authorized a request, to the minute. */
  last_used_at: Date | null;
  created_at: CreatedAt;
  deleted_at: Date | null;
}

/** A person who signs in: one e-mail, one password, members of one or more teams. */
export interface AccountTable {
  id: Generated<number>;
  email: string;
  password_hash: string;
  created_at: CreatedAt;
  totp_secret: string | null;
  totp_enabled_at: Date | null;
  totp_pending_secret: string | null;
  totp_last_step: number | null;
}

export interface RecoveryCodeTable {
  id: Generated<number>;
  account_id: number;
  code_hash: string;
  used_at: Date | null;
}

/** A sign-in whose password was right, waiting for its second factor: a code, or its setup (a team requires it). */
export interface SignInChallengeTable {
  id: Generated<number>;
  account_id: number;
  member_id: number;
  token_hash: string;
  need: "code" | "setup";
  attempts: Generated<number>;
  expires_at: ColumnType<Date, Date | string, Date | string>;
  used_at: Date | null;
}

/** An account's membership of one team. */
export type Role = "owner" | "member";

export interface MemberTable {
  id: Generated<number>;
  team_id: number;
  account_id: number;
  role: Generated<Role>;
  created_at: CreatedAt;
}

/** A password reset link: its token's hash, good once, until it expires. */
export interface PasswordResetTable {
  id: Generated<number>;
  account_id: number;
  token_hash: string;
  created_at: CreatedAt;
  expires_at: ColumnType<Date, Date | string, Date | string>;
  used_at: Date | null;
}

export interface InvitationTable {
  id: Generated<number>;
  team_id: number;
  email: string;
  token_hash: string;
  invited_by: number | null;
  created_at: CreatedAt;
  expires_at: ColumnType<Date, Date | string, Date | string>;
  accepted_at: Date | null;
  pending_password_hash: string | null;
  verify_token_hash: string | null;
  verify_expires_at: Date | null;
}

export interface SessionTable {
  id: Generated<number>;
  member_id: number;
  token_hash: string;
  created_at: CreatedAt;
  last_seen_at: ColumnType<Date, Date | string | undefined, Date | string>;
  expires_at: ColumnType<Date, Date | string, Date | string>;
  address: string | null;
  user_agent: string | null;
}

export interface RequestLogTable {
  id: Generated<number>;
  store_id: number;
  key_id: number | null;
  created_at: ColumnType<Date, Date | string, never>;
  method: string;
  route: string;
  status: number;
  error: string | null;
  request_id: string;
  latency_ms: number;
  /** What the call wrote: its kind (`orders`, ...) and key; never its body. */
  record_kind: ColumnType<string | null, string | null | undefined, never>;
  record_external_id: ColumnType<string | null, string | null | undefined, never>;
  /** A refusal's `details`: the fields it named. */
  details: ColumnType<unknown, string | null | undefined, never>;
  /** The path as sent (phones and e-mails in it masked), with its query. */
  path: ColumnType<string | null, string | null | undefined, never>;
  /** The error's code, when it was refused. */
  code: ColumnType<string | null, string | null | undefined, never>;
  /** The bodies as JSON, phones and e-mails masked, cut at a size (see `redactedJson` in `requests/request-log.service.ts`). */
  request_body: ColumnType<string | null, string | null | undefined, never>;
  response_body: ColumnType<string | null, string | null | undefined, never>;
}

/** A customer's profile, as the shop sends it and as a contact sync copies it to the customer's contact. */
interface Profile {
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  locale: string | null;
  tags: Generated<string[]>;
  lifetime_value: Generated<number>;
  orders_count: Generated<number>;
}

/** A store's messaging-app contact: one per E.164 phone, with the profile the last sync wrote. */
export interface ContactTable extends Profile {
  id: Generated<number>;
  store_id: number;
  phone: string;
  synced_at: Date | null;
  /** The customer whose profile the last sync wrote here: an erasure clears only its own. */
  synced_customer_id: number | null;
  created_at: CreatedAt;
}

export interface CustomerTable extends Profile {
  id: Generated<number>;
  store_id: number;
  /** The caller's id, or the E.164 phone for a phone-keyed customer; null once a phone key is erased. */
  external_id: string | null;
  keyed_by_phone: boolean;
  phone: string | null;
  contact_id: number | null;
  profile_version: Generated<number>;
  /** Whether the write that last touched the customer created it or changed a synced field. */
  profile_changed: Generated<boolean>;
  /** When the shop last changed the record, as it said (`source_updated_at`); an older write is not applied. */
  source_updated_at: ColumnType<Date | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  deleted_at: Date | null;
}

/** JSON as stored in jsonb: written as text, read back parsed. */
type Json = ColumnType<unknown, string | null | undefined, string | null>;
/** numeric(14, 2): read as text so no float ever touches money; written as a decimal string. */
type Money = ColumnType<string, string, string>;

/** The columns of every record a shop pushes: its store, its key, when the shop last changed it, and our own times. */
interface PushedRecord {
  id: Generated<number>;
  store_id: number;
  external_id: string;
  /** When the shop last changed the record, as it said (`source_updated_at`); an older write is not applied. */
  source_updated_at: ColumnType<Date | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** The columns orders and checkouts share: a price, line items, tags and metadata. */
interface Priced extends PushedRecord {
  customer_id: number;
  total_price: Money;
  currency: string | null;
  line_items: Json;
  tags: Generated<string[]>;
  metadata: Json;
}

export interface OrderTable extends Priced {
  placed_at: ColumnType<Date, string, string>;
  financial_status: string | null;
  fulfillment_status: string | null;
}

export interface CheckoutTable extends Priced {
  status: CheckoutStatus;
  abandonment_count: Generated<number>;
  /** Whether the write that last touched the checkout moved it into `abandoned` (or created it). */
  entered_abandoned: Generated<boolean>;
  abandoned_at: ColumnType<Date, string, string>;
  recovery_url: string | null;
}

export interface ShipmentTable extends PushedRecord {
  order_id: number;
  tracking_number: string | null;
  tracking_url: string | null;
  carrier: string | null;
  status: ShipmentStatus | null;
  /** Whether the write that last touched the shipment changed its status (or created it). */
  status_changed: Generated<boolean>;
  metadata: Json;
}

export type { JobStatus, MessageStatus };
/** The kinds of record an automation job is about. */
export type RecordType = "order" | "checkout" | "customer" | "shipment";

export interface AutomationJobTable {
  id: Generated<number>;
  store_id: number;
  flow: Flow;
  dedupe_key: string;
  record_type: RecordType;
  record_id: number;
  record_external_id: string;
  customer_id: number | null;
  payload: ColumnType<Record<string, unknown>, string | undefined, string>;
  status: Generated<JobStatus>;
  run_at: ColumnType<Date, Date | string | undefined, Date | string>;
  attempts: Generated<number>;
  last_error: string | null;
  locked_by: string | null;
  locked_until: Date | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  finished_at: Date | null;
}

export interface MessageTable {
  id: Generated<string>;
  store_id: number;
  job_id: number;
  flow: Flow;
  customer_id: number | null;
  contact_id: number | null;
  to_phone: string | null;
  content: ColumnType<unknown, string, string>;
  provider: string;
  status: Generated<MessageStatus>;
  created_at: CreatedAt;
  sent_at: Date | null;
}

/** Every contact a customer has been linked to, earlier phones included. */
export interface CustomerContactTable {
  customer_id: number;
  contact_id: number;
}

export interface IdempotencyKeyTable {
  store_id: number;
  key: string;
  /** SHA-256 of the method, path and body: the same key with another request is refused. */
  fingerprint: string;
  /** The first request's id, which replays carry too. */
  request_id: string;
  /** Null while the first request runs. */
  status: number | null;
  body: string | null;
  /** When the current claim was made (a claim taken over restarts it). */
  created_at: UpdatedAt;
  expires_at: ColumnType<Date, Date | string, Date | string>;
}

export interface RateLimitTable {
  key: string;
  points: number;
  expire: number | null;
}

export type ImportKind = "orders" | "customers" | "checkouts" | "shipments";
export type ImportStatus = "receiving" | "queued" | "running" | "succeeded" | "failed" | "cancelled";

export interface ImportTable {
  id: Generated<number>;
  store_id: number;
  team_id: number;
  key_id: number | null;
  kind: ImportKind;
  status: Generated<ImportStatus>;
  /** Bytes received, as sent (compressed when sent so). */
  bytes: Generated<number>;
  /** Records in the file: its lines that are not blank. */
  lines: Generated<number>;
  chunks: Generated<number>;
  /** Chunks merged, in order: the next to merge is this one. */
  merged_chunks: Generated<number>;
  created: Generated<number>;
  updated: Generated<number>;
  failed: Generated<number>;
  error: string | null;
  /** Why it failed, as a stable code (see `IMPORT_FAILURES`). */
  error_code: string | null;
  created_at: CreatedAt;
  received_at: Date | null;
  started_at: Date | null;
  finished_at: Date | null;
  updated_at: UpdatedAt;
}

export interface ImportChunkTable {
  import_id: number;
  seq: number;
  /** The file's line number of its first line (from 1). */
  first_line: number;
  lines: number;
  /** Its lines as sent, blank ones left out, deflated. */
  body: Buffer | Uint8Array;
  /** Where blank lines were left out: pairs of (index of the stored line they preceded, how many); null when none. */
  gaps: number[] | null;
  claimed_by: string | null;
  claimed_until: Date | null;
  attempts: Generated<number>;
}

export interface ImportErrorTable {
  import_id: number;
  line: number;
  external_id: string | null;
  status: number;
  code: string;
  error: string;
  details: unknown;
}

export interface AuditLogTable {
  id: Generated<number>;
  team_id: number;
  /** The member's e-mail, or `operator`. */
  actor: string;
  action: string;
  target: string;
  address: string | null;
  user_agent: string | null;
  created_at: CreatedAt;
}

/** A store's own messaging endpoint (see the console's delivery settings). */
export interface WebhookEndpointTable {
  store_id: number;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_until: Date | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** One hand-over of a message (or of a test event, with no message) to an endpoint, and its answer. */
export interface DeliveryAttemptTable {
  id: Generated<number>;
  store_id: number;
  message_id: string | null;
  url: string;
  attempted_at: CreatedAt;
  duration_ms: number;
  status: number | null;
  answer: string | null;
  error: string | null;
}

/** Calls to a store's paths with a key no team has, by the key's first characters (never the key). */
export interface UnknownKeyCallTable {
  store_id: number;
  key_prefix: string;
  calls: number;
  first_at: CreatedAt;
  last_at: UpdatedAt;
}

export interface Database {
  recovery_codes: RecoveryCodeTable;
  sign_in_challenges: SignInChallengeTable;
  password_resets: PasswordResetTable;
  unknown_key_calls: UnknownKeyCallTable;
  webhook_endpoints: WebhookEndpointTable;
  delivery_attempts: DeliveryAttemptTable;
  audit_log: AuditLogTable;
  imports: ImportTable;
  import_chunks: ImportChunkTable;
  import_errors: ImportErrorTable;
  teams: TeamTable;
  stores: StoreTable;
  api_keys: ApiKeyTable;
  accounts: AccountTable;
  members: MemberTable;
  invitations: InvitationTable;
  sessions: SessionTable;
  request_log: RequestLogTable;
  idempotency_keys: IdempotencyKeyTable;
  contacts: ContactTable;
  customers: CustomerTable;
  customer_contacts: CustomerContactTable;
  orders: OrderTable;
  checkouts: CheckoutTable;
  shipments: ShipmentTable;
  automation_jobs: AutomationJobTable;
  messages: MessageTable;
  rate_limits: RateLimitTable;
}

export type Db = Kysely<Database>;
/** A database handle or an open transaction: repositories accept either. */
export type Executor = Kysely<Database> | Transaction<Database>;
/** An open transaction: what a repository function takes when it locks rows (a lock outside one ends at once). */
export type Trx = Transaction<Database>;

export type TeamRow = Selectable<TeamTable>;
export type StoreRow = Selectable<StoreTable>;
export type ApiKeyRow = Selectable<ApiKeyTable>;
export type MemberRow = Selectable<MemberTable>;
export type CustomerRow = Selectable<CustomerTable>;
export type OrderRow = Selectable<OrderTable>;
export type CheckoutRow = Selectable<CheckoutTable>;
export type ShipmentRow = Selectable<ShipmentTable>;
export type JobRow = Selectable<AutomationJobTable>;
export type MessageRow = Selectable<MessageTable>;

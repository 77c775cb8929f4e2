import type { ColumnType, Generated, Kysely, Selectable, Transaction } from "kysely";

type CreatedAt = ColumnType<Date, never, never>;
type UpdatedAt = ColumnType<Date, Date | string | undefined, Date | string>;

export interface TeamTable {
  id: Generated<number>;
  name: string;
  created_at: CreatedAt;
}

export interface StoreTable {
  id: Generated<number>;
  team_id: number;
  name: string;
  country: string | null;
  recovery_delay_seconds: Generated<number>;
  paused: Generated<boolean>;
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
  created_at: CreatedAt;
  deleted_at: Date | null;
}

/** A store's messaging-app contact: one per E.164 phone. */
export interface ContactTable {
  id: Generated<number>;
  store_id: number;
  phone: string;
  created_at: CreatedAt;
}

export interface CustomerTable {
  id: Generated<number>;
  store_id: number;
  /** The caller's id, or the E.164 phone for a phone-keyed customer; null once a phone key is erased. */
  external_id: string | null;
  keyed_by_phone: boolean;
  phone: string | null;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  locale: string | null;
  tags: Generated<string[]>;
  lifetime_value: Generated<number>;
  orders_count: Generated<number>;
  contact_id: number | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  deleted_at: Date | null;
}

export interface RateLimitTable {
  key: string;
  points: number;
  expire: number | null;
}

export interface Database {
  teams: TeamTable;
  stores: StoreTable;
  api_keys: ApiKeyTable;
  contacts: ContactTable;
  customers: CustomerTable;
  rate_limits: RateLimitTable;
}

export type Db = Kysely<Database>;
/** A database handle or an open transaction: repositories accept either. */
export type Executor = Kysely<Database> | Transaction<Database>;

export type TeamRow = Selectable<TeamTable>;
export type StoreRow = Selectable<StoreTable>;
export type ApiKeyRow = Selectable<ApiKeyTable>;
export type CustomerRow = Selectable<CustomerTable>;

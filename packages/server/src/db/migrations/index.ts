import type { Migration } from "kysely/migration";
import * as platform from "./2026-11-22-001-platform.js";
import * as records from "./2026-11-22-002-records.js";
import * as automations from "./2026-11-22-003-automations.js";
import * as changeTracking from "./2026-11-22-004-change-tracking.js";
import * as console from "./2026-11-22-005-console.js";
import * as idempotency from "./2026-11-22-006-idempotency.js";
import * as contactOwner from "./2026-11-22-007-contact-owner.js";
import * as sourceUpdatedAt from "./2026-11-22-008-source-updated-at.js";
import * as accessChanged from "./2026-11-23-009-access-changed.js";
import * as staleWrite from "./2026-11-23-010-stale-write.js";
import * as orderOrFail from "./2026-11-23-011-order-or-fail.js";
import * as recoveryIndex from "./2026-11-24-012-recovery-index.js";
import * as failedIndex from "./2026-11-25-013-failed-index.js";
import * as changeOrder from "./2026-11-25-014-change-order.js";
import * as imports from "./2026-11-26-015-imports.js";
import * as auditLog from "./2026-11-26-016-audit-log.js";
import * as requestDetail from "./2026-11-26-017-request-detail.js";
import * as accounts from "./2026-11-26-018-accounts.js";

/** Every migration, in order. Listed here so the bundled server needs no migration folder at run time. */
export const migrations: Record<string, Migration> = {
  "2026-11-22-001-platform": platform,
  "2026-11-22-002-records": records,
  "2026-11-22-003-automations": automations,
  "2026-11-22-004-change-tracking": changeTracking,
  "2026-11-22-005-console": console,
  "2026-11-22-006-idempotency": idempotency,
  "2026-11-22-007-contact-owner": contactOwner,
  "2026-11-22-008-source-updated-at": sourceUpdatedAt,
  "2026-11-23-009-access-changed": accessChanged,
  "2026-11-23-010-stale-write": staleWrite,
  "2026-11-23-011-order-or-fail": orderOrFail,
  "2026-11-24-012-recovery-index": recoveryIndex,
  "2026-11-25-013-failed-index": failedIndex,
  "2026-11-25-014-change-order": changeOrder,
  "2026-11-26-015-imports": imports,
  "2026-11-26-016-audit-log": auditLog,
  "2026-11-26-017-request-detail": requestDetail,
  "2026-11-26-018-accounts": accounts,
};

import { sql, type QueryCreator, type RawBuilder } from "kysely";
import type { Database } from "../db/types.js";
import { FLOW_DEFINITIONS } from "./flows/index.js";
import { WRITTEN, type FlowDefinition, type TriggerOptions, type TriggerStore, type WriteShape } from "./flows/flow.js";
import { insertJobRows } from "./jobs.repository.js";

export { WRITTEN, type TriggerOptions, type TriggerStore, type WriteShape, type WrittenTable } from "./flows/flow.js";

/** Every flow; those fired by customers first, as customers are written before the records that carry them. */
const FLOWS: readonly FlowDefinition[] = Object.values<FlowDefinition>(FLOW_DEFINITIONS).sort((a, b) => Number(b.trigger.on === WRITTEN.customers) - Number(a.trigger.on === WRITTEN.customers));

/** One flow's jobs for the rows a write wrote: a select in `automation_jobs`' column order (see `insertJobRows`). */
function jobRows(flow: FlowDefinition, store: TriggerStore, options: TriggerOptions): RawBuilder<unknown> {
  const { on, when, oncePer, customerId, payload, afterRecoveryDelay } = flow.trigger;
  const key = oncePer === null ? sql`${sql.lit(`${flow.flow}:`)} || w.id` : sql`${sql.lit(`${flow.flow}:`)} || w.id || ':' || ${oncePer}`;
  let runAt = sql`now()`;
  if (afterRecoveryDelay) {
    if (store.recoveryDelaySeconds === undefined) throw new Error(`a write of ${on} needs the store's recovery delay`);
    runAt = sql`now() + make_interval(secs => ${store.recoveryDelaySeconds})`;
  }
  return sql`select ${store.id}::bigint, ${sql.lit(flow.flow)}, ${key}, ${sql.lit(flow.recordType)}, w.id, w.external_id, ${customerId}, ${payload}, ${runAt}
    from ${sql.table(on)} as w where ${when} and not ${options.backfill}::boolean`;
}

/**
 * Adds to a write's statement what its writes trigger, as every flow declares
 * it (`trigger`, `cancels`): the pending jobs it cancels (CTE `cancelled`) and
 * the jobs it calls for (CTE `jobs`), chosen in SQL from the rows the
 * statement wrote (its CTEs named by `write.tables`). The one way any write,
 * of any entry, records automations: in the statement, so in the transaction,
 * that writes the rows.
 */
export function withTriggers<QC>(qc: QC, write: WriteShape, store: TriggerStore, options: TriggerOptions): QC {
  const written = (table: string) => write.tables.some((name) => name === table);
  const fired = FLOWS.filter((flow) => written(flow.trigger.on));
  const cancellations = FLOWS.flatMap((flow) => Object.entries(flow.cancels ?? {}).flatMap(([table, cancel]) => (written(table) ? [cancel] : [])));
  // One statement updates a job once at most: two cancellations in one write would need to be one.
  if (cancellations.length > 1) throw new Error(`a write of ${write.tables.join(", ")} has more than one cancellation`);
  // Any write statement's CTEs, over the tables every statement has; each CTE added here is read by nothing after it.
  const base = qc as unknown as QueryCreator<Database>;
  const [cancel] = cancellations;
  const cancelling = cancel ? (base.with("cancelled", (cte) => cancel(cte, write)) as unknown as QueryCreator<Database>) : base;
  const recording = fired.length > 0 ? (cancelling.with("jobs", (cte) => insertJobRows(cte, fired.map((flow) => jobRows(flow, store, options)))) as unknown as QueryCreator<Database>) : cancelling;
  return recording as unknown as QC;
}

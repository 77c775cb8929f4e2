/** Where a request came from, as sessions and the audit log keep it. */
export type Caller = { address: string; userAgent: string | null };

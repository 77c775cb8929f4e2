import type { Response } from "express";

/**
 * The request bodies a process holds at once, weighed as they sit in memory:
 * each takes its share before a byte of it is read (its declared length, or
 * the limit when it declares none) and grows it once parsed (see `weightOf`);
 * the share comes back when the answer is done. A body that finds no room is
 * answered 503 `server_busy`, unread: many connections at once, each with a
 * body whose values weigh twenty times its bytes, cannot add up past the
 * budget.
 */
export type BodyBudget = {
  /** Grows the request's share to `bytes`: false, and nothing taken, when it would pass the budget. */
  hold(res: Response, bytes: number): boolean;
  readonly used: number;
};

export function bodyBudget(most: number): BodyBudget {
  let used = 0;
  return {
    hold(res, bytes) {
      const held = (res.locals.bodyWeight as number | undefined) ?? 0;
      if (bytes <= held) return true;
      // A body alone is always taken: a budget smaller than one body must not refuse it for ever.
      if (used > held && used - held + bytes > most) return false;
      used += bytes - held;
      res.locals.bodyWeight = bytes;
      if (held === 0) res.once("close", () => (used -= res.locals.bodyWeight as number));
      return true;
    },
    get used() {
      return used;
    },
  };
}

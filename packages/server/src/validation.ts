import type { ErrorDetail } from "@commerce-ingest/shared";
import { z } from "zod";

const article = (noun: string) => (/^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`);

const FORMAT_MESSAGES: Record<string, string> = {
  email: "must be a valid e-mail address",
  url: "must be a valid http or https URL",
  datetime: "must be an ISO 8601 date-time with a time zone (Z or +hh:mm)",
};

/**
 * Messages a shop developer can act on, for every field that fails. Messages a
 * schema sets itself take precedence over these.
 */
z.config({
  customError(issue) {
    switch (issue.code) {
      case "invalid_type":
        if (issue.input === undefined) return "is required";
        if (issue.expected === "int") return "must be an integer";
        return `must be ${article(issue.expected)}`;
      case "too_big": {
        const max = String(issue.maximum);
        if (issue.origin === "string") return `must be at most ${max} characters`;
        if (issue.origin === "array") return `must have at most ${max} items`;
        return issue.inclusive === false ? `must be less than ${max}` : `must be at most ${max}`;
      }
      case "too_small": {
        const min = String(issue.minimum);
        if (issue.origin === "string") return issue.minimum === 1 ? "must not be empty" : `must be at least ${min} characters`;
        if (issue.origin === "array") return `must have at least ${min} items`;
        return issue.inclusive === false ? `must be greater than ${min}` : `must be at least ${min}`;
      }
      case "invalid_format":
        return FORMAT_MESSAGES[issue.format];
      case "invalid_value":
        return `must be one of: ${issue.values.map(String).join(", ")}`;
      default:
        return undefined;
    }
  },
});

type IssueLike = { path?: readonly PropertyKey[]; message: string };

export function hasIssues(value: unknown): value is { issues: IssueLike[] } {
  return typeof value === "object" && value !== null && "issues" in value && Array.isArray(value.issues);
}

/** One detail per failing field, with dotted paths (`line_items.3.sku`). */
export function toDetails(issues: readonly IssueLike[]): ErrorDetail[] {
  return issues.map((issue) => ({
    path: (issue.path ?? []).map((part) => String(part)).join("."),
    message: issue.message,
  }));
}

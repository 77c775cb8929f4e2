/**
 * A body as the request log keeps it: JSON with every phone, e-mail and
 * personal field masked (by field name at any depth: `phone`, `email`,
 * `first_name`, `last_name`, `name`, `locale`, `tags`, what a customer's
 * erasure clears; and by shape, any string that is an e-mail or an
 * international phone, in longer texts too), cut at a size. What an
 * integrator needs to see why a call was refused (the fields, their values,
 * their nesting) stays; what names a person does not, so the erasure of a
 * customer leaves nothing of theirs in the log.
 */

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const PHONE = /^\+?[\d\s().-]{7,}$/;
const MASK = "•••";
/** An international phone inside a longer text (a note that names one). */
const PHONE_IN_TEXT = /\+\d[\d\s().-]{5,}\d/g;
/** An e-mail inside a longer text. */
const EMAIL_IN_TEXT = /[^\s@"<>(),;:]+@[^\s@"<>(),;:]+\.[^\s@"<>(),;:]+/g;

/** `+14155552671` → `+14•••71`: enough to tell two numbers apart in a log, not to call one. */
export function maskPhone(text: string): string {
  return text.length <= 6 ? MASK : `${text.slice(0, 3)}${MASK}${text.slice(-2)}`;
}

/** `ada@example.com` → `a•••@example.com`. */
export function maskEmail(text: string): string {
  const at = text.lastIndexOf("@");
  return at <= 0 ? MASK : `${text[0] ?? ""}${MASK}${text.slice(at)}`;
}

/** `Rosalind` → `R•••`. */
const maskName = (text: string) => (text === "" ? text : `${text[0] ?? ""}${MASK}`);
/** A customer's fields that its erasure clears, beside its phone and e-mail (an order's tags are masked alike). */
const PERSONAL = new Set(["first_name", "last_name", "name", "locale", "tags"]);

function maskString(text: string, field: string | undefined): string {
  if (field !== undefined && PERSONAL.has(field)) return maskName(text);
  if (field === "email" || EMAIL.test(text)) return maskEmail(text);
  if (field === "phone" || field === "to_phone" || (PHONE.test(text) && /\d{7}/.test(text.replace(/\D/g, "")))) return maskPhone(text);
  return text.includes("+") || text.includes("@") ? text.replace(PHONE_IN_TEXT, maskPhone).replace(EMAIL_IN_TEXT, maskEmail) : text;
}

/** Thrown inside the walk when the text reached its cap. */
class Full extends Error {}

/**
 * The value as JSON, masked, at most `cap` characters: a longer one is cut
 * there and ends with `…` (no longer JSON, still readable). Stops walking at
 * the cap, so a large batch costs what its first `cap` characters cost.
 */
export function redactedJson(value: unknown, cap: number): string {
  const parts: string[] = [];
  let length = 0;
  const push = (text: string) => {
    parts.push(text);
    length += text.length;
    if (length > cap) throw new Full();
  };
  const walk = (node: unknown, field: string | undefined): void => {
    if (typeof node === "string") return push(JSON.stringify(maskString(node, field)));
    if (node === null || typeof node !== "object") return push(node === undefined ? "null" : JSON.stringify(node) ?? "null");
    if (Array.isArray(node)) {
      push("[");
      node.forEach((item, i) => {
        if (i > 0) push(",");
        walk(item, field);
      });
      return push("]");
    }
    push("{");
    let first = true;
    for (const [key, item] of Object.entries(node)) {
      if (item === undefined) continue;
      push(`${first ? "" : ","}${JSON.stringify(key)}:`);
      first = false;
      walk(item, key);
    }
    push("}");
  };
  try {
    walk(value, undefined);
    return parts.join("");
  } catch (error) {
    if (!(error instanceof Full)) throw error;
    return `${parts.join("").slice(0, cap)}…`;
  }
}

/** A path as the log keeps it: a segment that is an e-mail or a phone (a customer keyed by its phone) masked. */
export function redactedPath(path: string): string {
  const [pathname = "", query] = path.split("?", 2);
  const masked = pathname
    .split("/")
    .map((segment) => {
      let text: string;
      try {
        text = decodeURIComponent(segment);
      } catch {
        return segment;
      }
      const redacted = maskString(text, undefined);
      return redacted === text ? segment : encodeURIComponent(redacted);
    })
    .join("/");
  return query === undefined ? masked : `${masked}?${query}`;
}

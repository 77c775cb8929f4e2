import type { z } from "zod";
import type { StoreContext } from "../tenancy/access.js";
import { AppError } from "../errors.js";
import { jsonObjectOf, parseItem, refusal, type ParsedItem, type UpsertSpec } from "../records/write-path.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** One line of an import, checked as a push of it alone would be. */
export type CheckedLine = { line: number; item: ParsedItem<unknown> };

/** A line read as its kind's record: its value, or the refusal a push of it would have answered. */
export function checkLine(spec: UpsertSpec<z.ZodType, object>, text: Buffer, country: string | null): ParsedItem<unknown> {
  let decoded: string;
  try {
    decoded = utf8.decode(text);
  } catch {
    return { externalId: null, refused: refusal(null, new AppError("MALFORMED_JSON")) };
  }
  const json = jsonObjectOf(decoded);
  if ("problem" in json) return { externalId: null, refused: refusal(null, json.problem) };
  return parseItem(spec, json.value, country, false);
}

/**
 * A chunk's lines in rounds that each hold a key at most once, in file order:
 * the first time each key appears, then the second, and so on. Writing the
 * rounds one after the other, each set-based, applies every line as if the
 * lines were pushed one by one, so the last line for a key wins.
 */
export function roundsOf(spec: UpsertSpec<z.ZodType, object>, lines: readonly CheckedLine[]): CheckedLine[][] {
  const seen = new Map<string, number>();
  const rounds: CheckedLine[][] = [];
  for (const checked of lines) {
    const { item } = checked;
    let round = 0;
    if (!item.refused) {
      const key = spec.keyOf ? spec.keyOf(item.value) : String(item.externalId);
      round = seen.get(key) ?? 0;
      seen.set(key, round + 1);
    }
    (rounds[round] ??= []).push(checked);
  }
  return rounds;
}

/**
 * Every line of a chunk, checked; every `perSlice` lines, `slice` may ask for a pause (to let the event loop
 * serve live calls: a chunk's check is milliseconds of one thread).
 */
export async function checkChunk(
  spec: UpsertSpec<z.ZodType, object>,
  chunk: { text: Buffer; firstLine: number; gaps: readonly number[] | null },
  store: Pick<StoreContext, "country">,
  slice?: () => Promise<void> | undefined,
  perSlice = 32,
): Promise<CheckedLine[]> {
  const checked: CheckedLine[] = [];
  for (const { line, text } of linesOf(chunk.text, chunk.firstLine, chunk.gaps)) {
    checked.push({ line, item: checkLine(spec, text, store.country) });
    if (slice && checked.length % perSlice === 0) await slice();
  }
  return checked;
}

export const isBlankByte = (byte: number | undefined) => byte === 0x20 || byte === 0x09 || byte === 0x0d;

/** A line that holds nothing but spaces, tabs or a carriage return: skipped, still counted for line numbers. */
export function isBlank(text: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (!isBlankByte(text[i])) return false;
  return true;
}

/**
 * The lines of a chunk, numbered as in the file: the blank lines left out
 * (`gaps`: pairs of the index of the line they preceded and how many) are
 * counted, and any blank line still in the text is skipped and counted.
 */
export function* linesOf(text: Buffer, firstLine: number, gaps: readonly number[] | null = null): Generator<{ line: number; text: Buffer }> {
  let line = firstLine;
  let start = 0;
  let index = 0;
  let gap = 0;
  while (start < text.length) {
    let end = text.indexOf(10, start);
    if (end === -1) end = text.length;
    if (!isBlank(text, start, end)) {
      if (gaps && gaps[gap] === index) {
        line += gaps[gap + 1] ?? 0;
        gap += 2;
      }
      yield { line, text: text.subarray(start, end) };
      index++;
    }
    line++;
    start = end + 1;
  }
}

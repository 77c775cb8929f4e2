import { QueryClient } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink, TRPCClientError } from "@trpc/client";
// The server's own router type (a dev dependency): the console calls exactly its procedures.
import type { ConsoleRouter } from "../../server/src/api/console/console.router.js";

/** The console's typed client: the server's own procedures, through tRPC's HTTP handler. */
export const trpc = createTRPCClient<ConsoleRouter>({
  links: [httpBatchLink({ url: "/console/trpc" })],
});

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      retry: (count, error) => count < 2 && !(error instanceof TRPCClientError && (error.data as { httpStatus?: number } | undefined)?.httpStatus !== 500),
      refetchOnWindowFocus: false,
    },
  },
});

/**
 * What a failed call says, for the page: the server's message, the contract's
 * code (`member_exists`, say), and each refused field's problem by its path.
 */
export function problemOf(error: unknown): { message: string; code: string | undefined; fields: Record<string, string> } {
  if (error instanceof TRPCClientError) {
    const data = error.data as { details?: Array<{ path: string; message: string }> | null; errorCode?: string | null } | undefined;
    const fields = Object.fromEntries((data?.details ?? []).map((detail) => [detail.path, detail.message]));
    return { message: error.message, code: data?.errorCode ?? undefined, fields };
  }
  return { message: error instanceof Error ? error.message : "Something went wrong", code: undefined, fields: {} };
}

/** When a refused call may be tried again (its `Retry-After`, in seconds), if it said. */
export function retryAfterOf(error: unknown): number | undefined {
  if (!(error instanceof TRPCClientError)) return undefined;
  const response = (error.meta as { response?: Response } | undefined)?.response;
  const seconds = Number(response?.headers.get("retry-after") ?? Number.NaN);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
}

/** A refusal's message; a throttled one says when to try again (from its Retry-After). */
export function throttledMessage(error: unknown): string {
  const seconds = retryAfterOf(error);
  if (seconds === undefined) return problemOf(error).message;
  const at = new Date(Date.now() + seconds * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  const wait = seconds < 90 ? `${seconds} seconds` : `${Math.ceil(seconds / 60)} minutes`;
  return `Too many attempts. Try again in ${wait} (at ${at}).`;
}

export function isSignedOut(error: unknown): boolean {
  return error instanceof TRPCClientError && (error.data as { code?: string } | undefined)?.code === "UNAUTHORIZED";
}

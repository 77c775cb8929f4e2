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

export function isSignedOut(error: unknown): boolean {
  return error instanceof TRPCClientError && (error.data as { code?: string } | undefined)?.code === "UNAUTHORIZED";
}

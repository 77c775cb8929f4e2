import { runAdmin } from "../cli/admin.js";

/** `pnpm admin ...`: the operator command line. */
process.exitCode = await runAdmin(process.argv.slice(2));

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useNavigate, useParams } from "react-router";
import { ErrorLine, usePageTitle } from "../components/ui.js";
import { problemOf, trpc } from "../trpc.js";

/** The link mailed to an invitation's e-mail: it proves the address, makes the account and signs in. */
export function Verify() {
  usePageTitle("Confirm your e-mail");
  const token = useParams().token ?? "";
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const verify = useMutation({
    mutationFn: () => trpc.invitation.verify.mutate({ token }),
    onSuccess: async () => {
      queryClient.clear();
      await navigate("/settings/api-keys");
    },
  });
  return (
    <main className="narrow">
      <h1>Confirm your e-mail</h1>
      <p>This confirms the address is yours, makes your account with the password you chose, and signs you in.</p>
      <ErrorLine error={verify.isError ? problemOf(verify.error).message : undefined} />
      <button type="button" onClick={() => verify.mutate()} disabled={verify.isPending || verify.isError}>
        Confirm and sign in
      </button>
    </main>
  );
}

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { CopyButton, ErrorLine, Time } from "../components/ui.js";
import { problemOf, trpc } from "../trpc.js";

export function Team() {
  const queryClient = useQueryClient();
  const team = useQuery({ queryKey: ["team"], queryFn: () => trpc.team.members.query() });
  const [email, setEmail] = useState("");
  const invite = useMutation({ mutationFn: () => trpc.team.invite.mutate({ email }) });
  const remove = useMutation({
    mutationFn: (memberId: number) => trpc.team.remove.mutate({ member_id: memberId }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["team"] }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    invite.mutate();
  };
  return (
    <section>
      <h1>Team</h1>
      {team.isError && <ErrorLine error={problemOf(team.error).message} />}
      <table>
        <thead>
          <tr>
            <th>E-mail</th>
            <th>Member since</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {team.data?.members.map((member) => (
            <tr key={member.id}>
              <td>
                {member.email} {member.id === team.data.me && <span className="muted">(you)</span>}
              </td>
              <td>
                <Time value={member.created_at} />
              </td>
              <td>
                <button
                  type="button"
                  className="danger quiet"
                  disabled={team.data.members.length === 1 || remove.isPending}
                  title={team.data.members.length === 1 ? "A team keeps at least one member" : undefined}
                  onClick={() => {
                    if (window.confirm(`Remove ${member.email} from the team?`)) remove.mutate(member.id);
                  }}
                >
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <ErrorLine error={remove.isError ? problemOf(remove.error).message : undefined} />
      <h2>Invite a member</h2>
      <form className="inline" onSubmit={submit}>
        <label>
          E-mail
          <input type="email" required value={email} onChange={(event) => setEmail(event.target.value)} />
        </label>
        <button type="submit" disabled={invite.isPending}>
          Create invitation link
        </button>
      </form>
      <ErrorLine error={invite.isError ? problemOf(invite.error).message : undefined} />
      {invite.data && (
        <div className="secret">
          <code>{invite.data.url}</code>
          <CopyButton text={invite.data.url} />
          <p className="muted">
            Send this link to {invite.data.email}; it works once, until <Time value={invite.data.expires_at} />.
          </p>
        </div>
      )}
    </section>
  );
}

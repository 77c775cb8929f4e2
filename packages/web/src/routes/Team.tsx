import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { CopyButton, ErrorLine, Field, FormProblem, Time, usePageTitle, ConfirmButton } from "../components/ui.js";
import { problemOf, trpc } from "../trpc.js";

export function Team() {
  usePageTitle("Team");
  const queryClient = useQueryClient();
  const team = useQuery({ queryKey: ["team"], queryFn: () => trpc.team.members.query() });
  const me = useQuery({ queryKey: ["me"], queryFn: () => trpc.session.me.query() });
  // Members, roles and invitations are an owner's to change; a member sees them.
  const owner = me.data?.role === "owner";
  const setRole = useMutation({
    mutationFn: (change: { member_id: number; role: "owner" | "member" }) => trpc.team.setRole.mutate(change),
    onSuccess: () => Promise.all([queryClient.invalidateQueries({ queryKey: ["team"] }), queryClient.invalidateQueries({ queryKey: ["me"] })]),
  });
  const [email, setEmail] = useState("");
  const invitations = useQuery({ queryKey: ["invitations"], queryFn: () => trpc.team.invitations.query() });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["invitations"] });
  const invite = useMutation({ mutationFn: () => trpc.team.invite.mutate({ email }), onSuccess: refresh });
  const renew = useMutation({ mutationFn: (id: number) => trpc.team.renewInvitation.mutate({ id }), onSuccess: refresh });
  const revoke = useMutation({ mutationFn: (id: number) => trpc.team.revokeInvitation.mutate({ id }), onSuccess: refresh });
  const link = renew.data ?? invite.data;
  const remove = useMutation({
    mutationFn: (memberId: number) => trpc.team.remove.mutate({ member_id: memberId }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["team"] }),
  });
  const inviteProblem = invite.isError ? problemOf(invite.error) : undefined;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    invite.mutate();
  };
  return (
    <section>
      <h1>Team</h1>
      {team.isError && <ErrorLine error={problemOf(team.error).message} />}
      <table tabIndex={0}>
        <thead>
          <tr>
            <th>E-mail</th>
            <th>Role</th>
            <th>Member since</th>
            {owner && <th />}
          </tr>
        </thead>
        <tbody>
          {team.data?.members.map((member) => (
            <tr key={member.id}>
              <td>
                {member.email} {member.id === team.data.me && <span className="muted">(you)</span>}
              </td>
              <td>{member.role}</td>
              <td>
                <Time value={member.created_at} />
              </td>
              {owner && (
              <td>
                <button
                  type="button"
                  className="quiet"
                  disabled={setRole.isPending}
                  aria-label={`${member.role === "owner" ? "Make member" : "Make owner"}: ${member.email}`}
                  onClick={() => setRole.mutate({ member_id: member.id, role: member.role === "owner" ? "member" : "owner" })}
                >
                  {member.role === "owner" ? "Make member" : "Make owner"}
                </button>{" "}
                <ConfirmButton
                  className="danger quiet"
                  label={`Remove ${member.email}`}
                  disabled={team.data.members.length === 1 || remove.isPending}
                  title={team.data.members.length === 1 ? "A team keeps at least one member" : undefined}
                  confirm="Remove the member"
                  question={`${member.email} will no longer see this team, and their sessions on it end now.`}
                  onConfirm={() => remove.mutate(member.id)}
                >
                  Remove
                </ConfirmButton>
              </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      <ErrorLine error={remove.isError ? problemOf(remove.error).message : setRole.isError ? problemOf(setRole.error).message : undefined} />
      <TeamSettings owner={owner} />
      {!owner && me.data && <p className="muted">You are a member: stores, keys, imports and delivery are yours to run; an owner invites and removes members and sets roles.</p>}
      {owner && (
      <>
      <h2>Invite a member</h2>
      <form className="inline" onSubmit={submit}>
        <Field label="E-mail" error={inviteProblem?.fields.email}>
          <input type="email" required value={email} onChange={(event) => setEmail(event.target.value)} />
        </Field>
        <button type="submit" disabled={invite.isPending}>
          Create invitation link
        </button>
      </form>
      <FormProblem problem={inviteProblem} fields={["email"]} />
      {link?.url === null && (
        <p role="status">
          Invitation sent to {link.email} by e-mail; its link works once, until <Time value={link.expires_at} />.
        </p>
      )}
      {link?.url && (
        <div className="secret">
          <code>{link.url}</code>
          <CopyButton text={link.url} />
          <p className="muted">
            Send this link to {link.email}; it works once, until <Time value={link.expires_at} />. A person who has an account already signs in
            to accept; a new person chooses a password.
          </p>
        </div>
      )}
      <h2>Pending invitations</h2>
      {invitations.isError && <ErrorLine error={problemOf(invitations.error).message} />}
      {invitations.data?.length === 0 ? (
        <p className="muted">No pending invitations.</p>
      ) : (
        <div className="scroll">
          <table tabIndex={0}>
            <thead>
              <tr>
                <th>E-mail</th>
                <th>Invited by</th>
                <th>Expires</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {invitations.data?.map((invitation) => (
                <tr key={invitation.id}>
                  <td>{invitation.email}</td>
                  <td>{invitation.invited_by ?? <span className="muted">an operator</span>}</td>
                  <td>
                    <Time value={invitation.expires_at} />
                  </td>
                  <td>
                    <button type="button" className="quiet" disabled={renew.isPending} onClick={() => renew.mutate(invitation.id)} title="Links are shown once: this makes a new one, and the old one stops working">
                      New link
                    </button>{" "}
                    <ConfirmButton
                      className="danger quiet"
                      disabled={revoke.isPending}
                      label={`Revoke the invitation of ${invitation.email}`}
                      confirm="Revoke the invitation"
                      question={`The invitation of ${invitation.email} will be refused from now on.`}
                      onConfirm={() => revoke.mutate(invitation.id)}
                    >
                      Revoke
                    </ConfirmButton>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ErrorLine error={renew.isError ? problemOf(renew.error).message : revoke.isError ? problemOf(revoke.error).message : undefined} />
      </>
      )}
    </section>
  );
}

/** The team's settings: two-factor sign-in required of its members (an owner's to change). */
function TeamSettings({ owner }: { owner: boolean }) {
  const queryClient = useQueryClient();
  const settings = useQuery({ queryKey: ["team-settings"], queryFn: () => trpc.team.settings.query() });
  const update = useMutation({
    mutationFn: (require: boolean) => trpc.team.updateSettings.mutate({ require_two_factor: require }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["team-settings"] }),
  });
  if (!settings.data) return null;
  return (
    <>
      <h2>Sign-in</h2>
      <label className="check">
        <input
          type="checkbox"
          checked={settings.data.require_two_factor}
          disabled={!owner || update.isPending}
          onChange={(event) => update.mutate(event.target.checked)}
        />{" "}
        Require two-factor sign-in of every member (from each one&apos;s next sign-in)
      </label>
      <ErrorLine error={update.isError ? problemOf(update.error).message : undefined} />
    </>
  );
}

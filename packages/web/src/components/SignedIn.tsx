import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { Link, Navigate, NavLink, Outlet, useLocation, useNavigate } from "react-router";
import { problemOf, trpc } from "../trpc.js";
import { ErrorLine } from "./ui.js";

/** The frame of every signed-in page; without a session, the sign-in page (coming back here after). */
export function SignedIn() {
  const location = useLocation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const me = useQuery({ queryKey: ["me"], queryFn: () => trpc.session.me.query() });
  const signOut = useMutation({
    mutationFn: () => trpc.session.signOut.mutate(),
    onSuccess: async () => {
      queryClient.clear();
      await navigate("/sign-in");
    },
  });
  // The page shown, read afresh for the other team (nothing of the one left is kept); a store's own pages belong to
  // the team left, so they give way to the other team's stores. Where the member went while it switched, it stays.
  // A switch refused (the member was removed from that team meanwhile, say) says why and stays on the team shown,
  // whose list of teams is read again.
  const switchTeam = useMutation({
    mutationFn: (teamId: number) => trpc.session.switchTeam.mutate({ team_id: teamId }),
    onSuccess: async () => {
      if (window.location.pathname.startsWith("/stores/")) await navigate("/stores");
      await queryClient.resetQueries();
    },
    onError: () => queryClient.invalidateQueries({ queryKey: ["me"] }),
  });
  // What a refused switch said stays until the member moves on to another page.
  const forgetSwitch = switchTeam.reset;
  useEffect(() => forgetSwitch(), [location.pathname, forgetSwitch]);
  if (me.isPending) return <p className="loading">Loading…</p>;
  if (me.isError) return <p className="error" role="alert">The console cannot reach the server. Try again in a moment.</p>;
  if (!me.data) return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;
  return (
    <div className="frame">
      <header>
        <strong className="brand">Commerce Ingest</strong>
        {me.data.teams.length > 1 ? (
          <select
            className="team"
            aria-label="Team"
            value={me.data.team.id}
            disabled={switchTeam.isPending}
            onChange={(event) => switchTeam.mutate(Number(event.target.value))}
          >
            {me.data.teams.map((team) => (
              <option key={team.id} value={team.id}>
                {team.name}
              </option>
            ))}
          </select>
        ) : (
          <span className="team" title="Your team">
            {me.data.team.name}
          </span>
        )}
        <nav aria-label="Console">
          <NavLink to="/settings/api-keys">Settings · API Keys</NavLink>
          <NavLink to="/stores">Stores</NavLink>
          <NavLink to="/team">Team</NavLink>
          <NavLink to="/audit">Audit log</NavLink>
          <a href="/docs">API reference</a>
        </nav>
        <Link className="who" to="/account" title="Your account: password and sessions">
          {me.data.email}
        </Link>
        <button type="button" className="quiet" onClick={() => signOut.mutate()} disabled={signOut.isPending}>
          Sign out
        </button>
      </header>
      <main>
        <ErrorLine error={switchTeam.isError ? `The team was not switched: ${problemOf(switchTeam.error).message}` : undefined} />
        <Outlet />
      </main>
    </div>
  );
}

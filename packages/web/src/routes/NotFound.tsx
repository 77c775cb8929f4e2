import { Link, useLocation } from "react-router";
import { usePageTitle } from "../components/ui.js";

/** A path the console does not have (the server answers it 404 too). */
export function NotFound() {
  usePageTitle("Page not found");
  const { pathname } = useLocation();
  return (
    <main className="narrow">
      <h1>Page not found</h1>
      <p>
        The console has no page at <code>{pathname}</code>.
      </p>
      <p>
        <Link to="/">Go to the console</Link> · <a href="/docs">API reference</a>
      </p>
    </main>
  );
}

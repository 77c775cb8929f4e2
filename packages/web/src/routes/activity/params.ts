import { useSearchParams } from "react-router";

/**
 * A filter kept in the address (so a view can be linked to and reloaded); empty removes it. A change starts from
 * the address as it is now, not as this page last rendered it: two filters changed before the page renders again
 * (the router renders in a transition) both stay.
 */
export function useParam(name: string): [string, (value: string) => void] {
  const [search, setSearch] = useSearchParams();
  return [
    search.get(name) ?? "",
    (value: string) => {
      const next = new URLSearchParams(window.location.search);
      if (value) next.set(name, value);
      else next.delete(name);
      setSearch(next, { replace: true });
    },
  ];
}

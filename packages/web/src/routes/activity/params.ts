import { useSearchParams } from "react-router";

/** A filter kept in the address (so a view can be linked to and reloaded); empty removes it. */
export function useParam(name: string): [string, (value: string) => void] {
  const [search, setSearch] = useSearchParams();
  return [
    search.get(name) ?? "",
    (value: string) =>
      setSearch(
        (current) => {
          const next = new URLSearchParams(current);
          if (value) next.set(name, value);
          else next.delete(name);
          return next;
        },
        { replace: true },
      ),
  ];
}

import { useQuery } from "@tanstack/react-query";
import { Link, useParams, useSearchParams } from "react-router";
import { usePageTitle } from "../components/ui.js";
import { trpc } from "../trpc.js";
import { Automations } from "./activity/automations.js";
import { Delivery } from "./activity/delivery.js";
import { Messages } from "./activity/messages.js";
import { Imports } from "./activity/imports.js";
import { Live } from "./activity/live.js";
import { Overview } from "./activity/overview.js";
import { Requests } from "./activity/requests.js";

const TABS = { overview: "Overview", live: "Live", automations: "Automations", messages: "Messages", delivery: "Delivery", requests: "Request log", imports: "Imports" } as const;
type Tab = keyof typeof TABS;

export function Activity() {
  const storeId = Number(useParams().storeId);
  // The tab is in the address (`?tab=imports`), so each one can be linked to and reloaded.
  const [search, setSearch] = useSearchParams();
  const asked = search.get("tab");
  const tab: Tab = asked && asked in TABS ? (asked as Tab) : "overview";
  const stores = useQuery({ queryKey: ["stores"], queryFn: () => trpc.stores.list.query() });
  const name = stores.data?.find((store) => store.id === storeId)?.name;
  const title = name ? `${name} (store ${storeId})` : `Store ${storeId}`;
  usePageTitle(`${TABS[tab]} · ${title}`);
  return (
    <section>
      <p>
        <Link to="/stores">← Stores</Link>
      </p>
      <h1>{title}: activity</h1>
      <div role="tablist" className="tabs">
        {(Object.keys(TABS) as Tab[]).map((name) => (
          <button key={name} type="button" role="tab" aria-selected={tab === name} onClick={() => setSearch(name === "overview" ? {} : { tab: name })}>
            {TABS[name]}
          </button>
        ))}
      </div>
      {tab === "overview" ? (
        <Overview storeId={storeId} />
      ) : tab === "live" ? (
        <Live storeId={storeId} />
      ) : tab === "automations" ? (
        <Automations storeId={storeId} />
      ) : tab === "messages" ? (
        <Messages storeId={storeId} />
      ) : tab === "delivery" ? (
        <Delivery storeId={storeId} />
      ) : tab === "requests" ? (
        <Requests storeId={storeId} />
      ) : (
        <Imports storeId={storeId} />
      )}
    </section>
  );
}

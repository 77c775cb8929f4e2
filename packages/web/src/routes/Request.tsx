import { Link, useParams } from "react-router";
import { usePageTitle } from "../components/ui.js";
import { CallDetail } from "./activity/call.js";

/** One call of a store's request log, at an address of its own (a link to share with whoever debugs it). */
export function Request() {
  const params = useParams();
  const storeId = Number(params.storeId);
  const id = Number(params.id);
  usePageTitle(`Call ${id} · Store ${storeId}`);
  return (
    <section>
      <p>
        <Link to={`/stores/${storeId}/activity?tab=requests`}>← Request log</Link>
      </p>
      <h1>Call {id}</h1>
      {Number.isSafeInteger(id) && id > 0 ? <CallDetail storeId={storeId} id={id} /> : <p className="error">No such call.</p>}
    </section>
  );
}

import { useEffect } from "react";
import { Link, useParams } from "react-router";
import { CallDetail } from "./activity/call.js";

/** One call of a store's request log, at an address of its own (a link to share with whoever debugs it). */
export function Request() {
  const params = useParams();
  const storeId = Number(params.storeId);
  const id = Number(params.id);
  useEffect(() => {
    document.title = `Call ${id} · Store ${storeId} · Commerce Ingest`;
  }, [storeId, id]);
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

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link } from "react-router";
import { ConfirmButton, ErrorLine, Time } from "../../components/ui.js";
import { problemOf, trpc } from "../../trpc.js";
import { useParam } from "./params.js";

const FLOWS = ["post_purchase", "checkout_recovery", "contact_sync", "shipping_notification"] as const;
const STATUSES = ["pending", "sent", "failed"] as const;
type Flow = (typeof FLOWS)[number];
type Status = (typeof STATUSES)[number];
const PAGE = 50;

type Page = Awaited<ReturnType<typeof trpc.messages.list.query>>;
type Message = Page["messages"][number];

/** A record's page, from a run's record type (`order`) and key. */
export function recordPath(storeId: number, type: string, externalId: string): string {
  return `/stores/${storeId}/records/${type}s/${encodeURIComponent(externalId)}`;
}

/** A store's messages: what each said, to whom (masked), every attempt to deliver it and what the endpoint answered. */
export function Messages({ storeId }: { storeId: number }) {
  const [flowParam, setFlow] = useParam("flow");
  const [statusParam, setStatus] = useParam("status");
  const [customer, setCustomer] = useParam("customer");
  const [order, setOrder] = useParam("order");
  const flow = (FLOWS as readonly string[]).includes(flowParam) ? (flowParam as Flow) : "";
  const status = (STATUSES as readonly string[]).includes(statusParam) ? (statusParam as Status) : "";
  // The pages gone through: each starts after the last message of the one before (none: the newest).
  const [pages, setPages] = useState<Array<string | undefined>>([undefined]);
  const before = pages[pages.length - 1];
  const filters = { flow, status, customer, order };
  const [seen, setSeen] = useState(JSON.stringify(filters));
  if (seen !== JSON.stringify(filters)) {
    setSeen(JSON.stringify(filters));
    setPages([undefined]);
  }
  const messages = useQuery({
    queryKey: ["messages", storeId, filters, before],
    queryFn: () =>
      trpc.messages.list.query({
        store_id: storeId,
        flow: flow || undefined,
        status: status || undefined,
        customer: customer.trim() || undefined,
        order: order.trim() || undefined,
        before,
        limit: PAGE,
      }),
    refetchInterval: before ? false : 3000,
    retry: false,
  });
  return (
    <>
      <div className="filters">
        <label>
          Flow
          <select value={flow} onChange={(event) => setFlow(event.target.value)}>
            <option value="">all</option>
            {FLOWS.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select value={status} onChange={(event) => setStatus(event.target.value)}>
            <option value="">all</option>
            {STATUSES.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
        <label>
          Customer
          <input value={customer} placeholder="external_id" onChange={(event) => setCustomer(event.target.value)} />
        </label>
        <label>
          Order
          <input value={order} placeholder="external_id" onChange={(event) => setOrder(event.target.value)} />
        </label>
      </div>
      <p className="muted">Every message the store's automations sent, newest first, with each attempt to deliver it. Recipients are masked.</p>
      {messages.isError && <ErrorLine error={`These filters cannot be used: ${problemOf(messages.error).message}`} />}
      <ul className="messages">
        {messages.data?.messages.map((message) => (
          <MessageItem key={message.id} storeId={storeId} message={message} />
        ))}
      </ul>
      {messages.data?.messages.length === 0 && <p className="muted">No message{Object.values(filters).some(Boolean) ? " matches these filters" : " yet"}.</p>}
      <div className="actions">
        <button type="button" className="quiet" disabled={pages.length === 1} onClick={() => setPages([undefined])}>
          Newest
        </button>
        <button type="button" className="quiet" disabled={!messages.data?.next} onClick={() => messages.data?.next && setPages([...pages, messages.data.next])}>
          Older
        </button>
      </div>
    </>
  );
}

function MessageItem({ storeId, message }: { storeId: number; message: Message }) {
  const queryClient = useQueryClient();
  const resend = useMutation({
    mutationFn: () => trpc.messages.resend.mutate({ store_id: storeId, id: message.id }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["messages", storeId] }),
  });
  const { run } = message;
  return (
    <li>
      <div className="message-head">
        <Time value={message.created_at} />
        <span className={`badge ${message.status}`}>{message.status}</span>
        <strong>{message.flow}</strong>
        <span>to {message.to_phone ?? <span className="muted">redacted</span>}</span>
        <Link to={recordPath(storeId, run.record_type, run.record_external_id)}>
          {run.record_type} <code>{run.record_external_id}</code>
        </Link>
      </div>
      <p className="muted">
        {message.attempts.length === 0 ? "No delivery attempt kept" : `${message.attempts.length} attempt${message.attempts.length === 1 ? "" : "s"}`}
        {run.next_try_at && (
          <>
            {" "}
            · next try <Time value={run.next_try_at} />
          </>
        )}
        {run.last_error && message.status !== "sent" && <> · last error: {run.last_error}</>}
      </p>
      {message.status === "failed" && (
        <div className="actions">
          <ConfirmButton
            className="quiet"
            confirm="Send again"
            question={`Send this ${message.flow} message again? It is delivered with the same id, with a new round of attempts.`}
            disabled={resend.isPending}
            onConfirm={() => resend.mutate()}
          >
            Send again
          </ConfirmButton>
        </div>
      )}
      {resend.data && (
        <p role="status">{resend.data.resent ? "Queued to send again." : "Already on its way."}</p>
      )}
      {resend.isError && <ErrorLine error={problemOf(resend.error).message} />}
      <details>
        <summary>Content and attempts</summary>
        <pre tabIndex={0}>{JSON.stringify(message.content, null, 2)}</pre>
        {message.attempts.length > 0 && (
          <table tabIndex={0}>
            <thead>
              <tr>
                <th>Time</th>
                <th>Answer</th>
                <th>ms</th>
                <th>Endpoint said</th>
              </tr>
            </thead>
            <tbody>
              {message.attempts.map((attempt) => (
                <tr key={attempt.id}>
                  <td>
                    <Time value={attempt.at} />
                  </td>
                  <td>{attempt.status === null ? <span className="badge s5">none</span> : <span className={`badge s${String(attempt.status)[0]}`}>{attempt.status}</span>}</td>
                  <td>{attempt.duration_ms}</td>
                  <td className="answer">{attempt.error ?? attempt.answer}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </details>
    </li>
  );
}

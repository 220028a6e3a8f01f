import Link from "next/link";
import type { WebhookEndpointRecord } from "@/lib/webhooks/endpoints";

/** The workers page's webhook section: every endpoint with its counts; one failing for an hour is flagged. */
export function WebhookHealth({ endpoints }: { endpoints: WebhookEndpointRecord[] }) {
  const failing = endpoints.filter((endpoint) => endpoint.failingLong && !endpoint.disabledAt);
  return (
    <section className="stack" aria-labelledby="webhook-health-heading">
      <h2 id="webhook-health-heading">Webhook endpoints</h2>
      {failing.length > 0 && (
        <p role="alert" data-testid="webhook-failing-flag">
          {failing.length === 1 ? "1 endpoint has" : `${failing.length} endpoints have`} been failing for over an hour:{" "}
          {failing.map((endpoint, index) => (
            <span key={endpoint.id}>
              {index > 0 && ", "}
              <Link href={`/webhooks/${endpoint.id}`}>{endpoint.url}</Link> (since {endpoint.failingSince})
            </span>
          ))}
        </p>
      )}
      {endpoints.length === 0 ? (
        <p>No webhook endpoint is registered (an admin registers them on /admin).</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Endpoint</th>
              <th scope="col">Pending</th>
              <th scope="col">Delivered</th>
              <th scope="col">Failed</th>
              <th scope="col">Dead-lettered</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {endpoints.map((endpoint) => (
              <tr key={endpoint.id}>
                <td>
                  <Link href={`/webhooks/${endpoint.id}`}>{endpoint.url}</Link>
                </td>
                <td>{endpoint.counts.pending}</td>
                <td>{endpoint.counts.delivered}</td>
                <td>{endpoint.counts.failed}</td>
                <td>{endpoint.counts.deadLettered}</td>
                <td>{endpoint.disabledAt ? "disabled" : endpoint.failingSince ? `failing since ${endpoint.failingSince}` : "healthy"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

import { Guarantees } from "@/components/guarantees";
import { ThemeToggle } from "@/components/ui/theme-toggle";

export default function HomePage() {
  return (
    <main id="main" className="stack">
      <div className="row">
        <h1 style={{ flex: 1 }}>Fenceline</h1>
        <ThemeToggle />
      </div>
      <p>
        Multi-step requests whose steps call external services, run on fallible workers, each completed step proven by a
        durable receipt. A lease says who may work now; only evidence says what happened.
      </p>
      <nav aria-label="Views">
        <ul>
          <li>
            <a href="/requests">Requests and steps</a> — engineers: lease history, attempts, receipts
          </li>
          <li>
            <a href="/review">Review queue</a> — support: outcomes only a person can settle
          </li>
          <li>
            <a href="/metrics">Metrics</a> — lease churn apart from outcome uncertainty
          </li>
          <li>
            <a href="/workers">Workers</a> — sessions, heartbeats, and the fault lab
          </li>
          <li>
            <a href="/login">Staff sign-in</a> — support, engineers and admins
          </li>
          <li>
            <a href="/api/openapi.json">API (OpenAPI)</a>
          </li>
        </ul>
      </nav>
      <Guarantees />
    </main>
  );
}

"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import type { Account } from "@/lib/auth/accounts";
import { APP_KEY_SCOPES } from "@/lib/auth/app-key-scopes";
import type { AppKeyRecord } from "@/lib/auth/app-keys";
import { STAFF_ROLES } from "@/lib/auth/roles";
import type { ScrapeTokenRecord } from "@/lib/auth/scrape-tokens";
import type { WorkerTokenRecord } from "@/lib/auth/worker-tokens";
import { call, type CallResult } from "./call";

export function AdminConsole({
  accounts,
  tokens,
  appKeys,
  scrapeTokens,
}: {
  accounts: Account[];
  tokens: WorkerTokenRecord[];
  appKeys: AppKeyRecord[];
  scrapeTokens: ScrapeTokenRecord[];
}) {
  const router = useRouter();
  const [message, setMessage] = useState<string | null>(null);
  const [shownToken, setShownToken] = useState<string | null>(null);
  const [shownAppKey, setShownAppKey] = useState<string | null>(null);
  const [shownScrapeToken, setShownScrapeToken] = useState<string | null>(null);

  const after = (result: CallResult, done: string) => {
    setMessage(result.ok ? done : `Refused: ${result.detail}`);
    if (result.ok) router.refresh();
  };

  async function createAccount(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const roles = STAFF_ROLES.filter((role) => form.get(`role-${role}`) === "on");
    after(await call("POST", "/api/admin/accounts", { email: form.get("email"), name: form.get("name"), password: form.get("password"), roles }), "Account created.");
  }

  async function toggleRole(account: Account, role: (typeof STAFF_ROLES)[number]) {
    const roles = account.roles.includes(role) ? account.roles.filter((held) => held !== role) : [...account.roles, role];
    after(await call("PUT", `/api/admin/accounts/${account.id}/roles`, { roles }), `Roles of ${account.email}: ${roles.join(", ") || "none"}.`);
  }

  async function createToken(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const result = await call("POST", "/api/admin/worker-tokens", { workerName: new FormData(event.currentTarget).get("workerName") });
    setShownToken(result.ok ? (result.data as { token: string }).token : null);
    after(result, "Worker token created: copy it now, it is not shown again.");
  }

  async function createAppKey(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const scopes = APP_KEY_SCOPES.filter((scope) => form.get(`scope-${scope}`) === "on");
    const result = await call("POST", "/api/admin/app-keys", { app: form.get("app"), scopes });
    setShownAppKey(result.ok ? (result.data as { key: string }).key : null);
    after(result, "App key created: copy it now, it is not shown again.");
  }

  async function createScrapeToken(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const result = await call("POST", "/api/admin/scrape-tokens", { name: new FormData(event.currentTarget).get("scraperName") });
    setShownScrapeToken(result.ok ? (result.data as { token: string }).token : null);
    after(result, "Scrape token created: copy it now, it is not shown again.");
  }

  return (
    <div className="stack">
      <h1>Admin</h1>
      {message && <p role="status">{message}</p>}

      <h2>Staff accounts</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Name</th>
            {STAFF_ROLES.map((role) => (
              <th scope="col" key={role}>
                {role}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {accounts.map((account) => (
            <tr key={account.id}>
              <td>{account.email}</td>
              <td>{account.name}</td>
              {STAFF_ROLES.map((role) => (
                <td key={role}>
                  <input type="checkbox" aria-label={`${role} role for ${account.email}`} checked={account.roles.includes(role)} onChange={() => void toggleRole(account, role)} />
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      <form className="card stack" onSubmit={createAccount}>
        <h3>New account</h3>
        <label className="stack">
          <span>Email</span>
          <input name="email" type="email" required />
        </label>
        <label className="stack">
          <span>Name</span>
          <input name="name" required />
        </label>
        <label className="stack">
          <span>Password (12 characters or more)</span>
          <input name="password" type="password" autoComplete="new-password" minLength={12} required />
        </label>
        <fieldset className="row">
          <legend>Roles</legend>
          {STAFF_ROLES.map((role) => (
            <label key={role}>
              <input type="checkbox" name={`role-${role}`} /> {role}
            </label>
          ))}
        </fieldset>
        <button type="submit">Create account</button>
      </form>

      <h2>Worker tokens</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Worker</th>
            <th scope="col">Created</th>
            <th scope="col">State</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {tokens.map((token) => (
            <tr key={token.id}>
              <td>{token.workerName}</td>
              <td>
                {token.createdAt} by {token.createdBy}
              </td>
              <td>{token.revokedAt ? `revoked ${token.revokedAt} by ${token.revokedBy}` : "active"}</td>
              <td>
                {!token.revokedAt && (
                  <button type="button" onClick={async () => after(await call("POST", `/api/admin/worker-tokens/${token.id}/revoke`), `Token of ${token.workerName} revoked.`)}>
                    Revoke {token.workerName}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form className="card stack" onSubmit={createToken}>
        <h3>New worker token</h3>
        <label className="stack">
          <span>Worker name</span>
          <input name="workerName" pattern="[a-z0-9][a-z0-9._\-]{0,62}" required />
        </label>
        <button type="submit">Create token</button>
        {shownToken && (
          <p>
            Token (shown once): <code data-testid="new-worker-token">{shownToken}</code>
          </p>
        )}
      </form>

      <h2>App keys</h2>
      <p>An app key lets a backend create and read its own requests through fenceline/client (FENCELINE_API_KEY).</p>
      <table>
        <thead>
          <tr>
            <th scope="col">App</th>
            <th scope="col">Scopes</th>
            <th scope="col">Created</th>
            <th scope="col">State</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {appKeys.map((key) => (
            <tr key={key.id}>
              <td>{key.app}</td>
              <td>{key.scopes.join(", ")}</td>
              <td>
                {key.createdAt} by {key.createdBy}
              </td>
              <td>{key.revokedAt ? `revoked ${key.revokedAt} by ${key.revokedBy}` : "active"}</td>
              <td>
                {!key.revokedAt && (
                  <button type="button" onClick={async () => after(await call("POST", `/api/admin/app-keys/${key.id}/revoke`), `App key ${key.id} of ${key.app} revoked.`)}>
                    Revoke key {key.id} of {key.app}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form className="card stack" onSubmit={createAppKey}>
        <h3>New app key</h3>
        <label className="stack">
          <span>App name</span>
          <input name="app" pattern="[a-z0-9][a-z0-9._\-]{0,62}" required />
        </label>
        <fieldset className="row">
          <legend>Scopes</legend>
          {APP_KEY_SCOPES.map((scope) => (
            <label key={scope}>
              <input type="checkbox" name={`scope-${scope}`} defaultChecked /> {scope}
            </label>
          ))}
        </fieldset>
        <button type="submit">Create app key</button>
        {shownAppKey && (
          <p>
            Key (shown once): <code data-testid="new-app-key">{shownAppKey}</code>
          </p>
        )}
      </form>

      <h2>Scrape tokens</h2>
      <p>A scrape token lets a Prometheus server read /api/metrics/prometheus, and nothing else.</p>
      <table>
        <thead>
          <tr>
            <th scope="col">Scraper</th>
            <th scope="col">Created</th>
            <th scope="col">Last scrape</th>
            <th scope="col">State</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {scrapeTokens.map((token) => (
            <tr key={token.id}>
              <td>{token.name}</td>
              <td>
                {token.createdAt} by {token.createdBy}
              </td>
              <td>{token.lastUsedAt ?? "never"}</td>
              <td>{token.revokedAt ? `revoked ${token.revokedAt} by ${token.revokedBy}` : "active"}</td>
              <td>
                {!token.revokedAt && (
                  <button type="button" onClick={async () => after(await call("POST", `/api/admin/scrape-tokens/${token.id}/revoke`), `Scrape token of ${token.name} revoked.`)}>
                    Revoke scrape token {token.name}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form className="card stack" onSubmit={createScrapeToken}>
        <h3>New scrape token</h3>
        <label className="stack">
          <span>Scraper name</span>
          <input name="scraperName" pattern="[a-z0-9][a-z0-9._\-]{0,62}" required />
        </label>
        <button type="submit">Create scrape token</button>
        {shownScrapeToken && (
          <p>
            Scrape token (shown once): <code data-testid="new-scrape-token">{shownScrapeToken}</code>
          </p>
        )}
      </form>
    </div>
  );
}

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
import { createdColumn, CredentialSection } from "./credentials";

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

      <CredentialSection
        title="Worker tokens"
        credentials={tokens}
        columns={[{ header: "Worker", cell: (token) => token.workerName }, createdColumn()]}
        revoke={{
          path: (token) => `/api/admin/worker-tokens/${token.id}/revoke`,
          label: (token) => `Revoke ${token.workerName}`,
          done: (token) => `Token of ${token.workerName} revoked.`,
        }}
        create={{
          title: "New worker token",
          path: "/api/admin/worker-tokens",
          fields: (
            <label className="stack">
              <span>Worker name</span>
              <input name="workerName" pattern="[a-z0-9][a-z0-9._\-]{0,62}" required />
            </label>
          ),
          body: (form) => ({ workerName: form.get("workerName") }),
          submit: "Create token",
          secret: { field: "token", label: "Token", testId: "new-worker-token" },
          done: "Worker token created: copy it now, it is not shown again.",
        }}
        after={after}
      />

      <CredentialSection
        title="App keys"
        intro="An app key lets a backend create and read its own requests through fenceline/client (FENCELINE_API_KEY)."
        credentials={appKeys}
        columns={[
          { header: "App", cell: (key) => key.app },
          { header: "Scopes", cell: (key) => key.scopes.join(", ") },
          { header: "Kinds", cell: (key) => (key.kinds.length === 0 ? "every kind" : key.kinds.join(", ")) },
          createdColumn(),
        ]}
        revoke={{
          path: (key) => `/api/admin/app-keys/${key.id}/revoke`,
          label: (key) => `Revoke key ${key.id} of ${key.app}`,
          done: (key) => `App key ${key.id} of ${key.app} revoked.`,
        }}
        create={{
          title: "New app key",
          path: "/api/admin/app-keys",
          fields: (
            <>
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
              <label className="stack">
                <span>Kinds it may start (comma-separated; empty: every kind)</span>
                <input name="kinds" placeholder="order, refund" autoComplete="off" />
              </label>
            </>
          ),
          body: (form) => ({
            app: form.get("app"),
            scopes: APP_KEY_SCOPES.filter((scope) => form.get(`scope-${scope}`) === "on"),
            kinds: String(form.get("kinds") ?? "").split(",").map((kind) => kind.trim()).filter((kind) => kind !== ""),
          }),
          submit: "Create app key",
          secret: { field: "key", label: "Key", testId: "new-app-key" },
          done: "App key created: copy it now, it is not shown again.",
        }}
        after={after}
      />

      <CredentialSection
        title="Scrape tokens"
        intro="A scrape token lets a Prometheus server read /api/metrics/prometheus, and nothing else."
        credentials={scrapeTokens}
        columns={[{ header: "Scraper", cell: (token) => token.name }, createdColumn(), { header: "Last scrape", cell: (token) => token.lastUsedAt ?? "never" }]}
        revoke={{
          path: (token) => `/api/admin/scrape-tokens/${token.id}/revoke`,
          label: (token) => `Revoke scrape token ${token.name}`,
          done: (token) => `Scrape token of ${token.name} revoked.`,
        }}
        create={{
          title: "New scrape token",
          path: "/api/admin/scrape-tokens",
          fields: (
            <label className="stack">
              <span>Scraper name</span>
              <input name="scraperName" pattern="[a-z0-9][a-z0-9._\-]{0,62}" required />
            </label>
          ),
          body: (form) => ({ name: form.get("scraperName") }),
          submit: "Create scrape token",
          secret: { field: "token", label: "Scrape token", testId: "new-scrape-token" },
          done: "Scrape token created: copy it now, it is not shown again.",
        }}
        after={after}
      />
    </div>
  );
}

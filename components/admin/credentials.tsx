"use client";

import { useState, type FormEvent, type ReactNode } from "react";
import { call, type CallResult } from "./call";

/** What every credential on /admin has: who created it when, and whether and by whom it was revoked. */
export interface Credential {
  readonly id: string;
  readonly createdAt: string;
  readonly createdBy: string;
  readonly revokedAt: string | null;
  readonly revokedBy: string | null;
}

export interface CredentialColumn<T> {
  readonly header: string;
  readonly cell: (credential: T) => ReactNode;
}

/** The "Created" column: when and by whom. */
export const createdColumn = <T extends Credential>(): CredentialColumn<T> => ({
  header: "Created",
  cell: (credential) => (
    <>
      {credential.createdAt} by {credential.createdBy}
    </>
  ),
});

/**
 * One kind of credential on /admin (worker tokens, app keys, scrape tokens): its list with a
 * State column and a revoke button per active one, and the form that creates one and shows its
 * secret once.
 */
export function CredentialSection<T extends Credential>({
  title,
  intro,
  credentials,
  columns,
  revoke,
  create,
  after,
}: {
  title: string;
  intro?: string;
  credentials: readonly T[];
  /** Every column before State and Action, in order. */
  columns: readonly CredentialColumn<T>[];
  revoke: { path: (credential: T) => string; label: (credential: T) => string; done: (credential: T) => string };
  create: {
    title: string;
    path: string;
    /** The form's inputs; `body` reads them into the request body. */
    fields: ReactNode;
    body: (form: FormData) => unknown;
    submit: string;
    /** The field of the answer that holds the secret, its label, and the test id of where it is shown. */
    secret: { field: string; label: string; testId: string };
    done: string;
  };
  after: (result: CallResult, done: string) => void;
}) {
  const [shown, setShown] = useState<string | null>(null);

  async function onCreate(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const result = await call("POST", create.path, create.body(new FormData(event.currentTarget)));
    setShown(result.ok ? (result.data as Record<string, string>)[create.secret.field]! : null);
    after(result, create.done);
  }

  return (
    <>
      <h2>{title}</h2>
      {intro && <p>{intro}</p>}
      <table>
        <thead>
          <tr>
            {columns.map((column) => (
              <th scope="col" key={column.header}>
                {column.header}
              </th>
            ))}
            <th scope="col">State</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {credentials.map((credential) => (
            <tr key={credential.id}>
              {columns.map((column) => (
                <td key={column.header}>{column.cell(credential)}</td>
              ))}
              <td>{credential.revokedAt ? `revoked ${credential.revokedAt} by ${credential.revokedBy}` : "active"}</td>
              <td>
                {!credential.revokedAt && (
                  <button type="button" onClick={async () => after(await call("POST", revoke.path(credential)), revoke.done(credential))}>
                    {revoke.label(credential)}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form className="card stack" onSubmit={onCreate}>
        <h3>{create.title}</h3>
        {create.fields}
        <button type="submit">{create.submit}</button>
        {shown && (
          <p>
            {create.secret.label} (shown once): <code data-testid={create.secret.testId}>{shown}</code>
          </p>
        )}
      </form>
    </>
  );
}

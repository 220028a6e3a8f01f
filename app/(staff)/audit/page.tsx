/** /audit — who changed what: resolutions, accounts, worker tokens, epoch transitions. */
import type { Metadata } from "next";
import { auditQuery } from "@/lib/api/contract/staff";
import { readAuditPage } from "@/lib/audit/log";
import { authorizePage } from "@/lib/auth/page";
import { prisma } from "@/lib/db/pool";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Audit log" };

const show = (value: unknown) => (value === null || value === undefined ? "—" : JSON.stringify(value));

export default async function AuditPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  await authorizePage("audit:read", "/audit");
  const parsed = auditQuery.safeParse(await searchParams);
  const { before, limit } = parsed.success ? parsed.data : { before: undefined, limit: 50 };
  const page = await readAuditPage(prisma(), before ?? null, limit);
  return (
    <div className="stack">
      <h1>Audit log</h1>
      <p className="muted">Append-only: every review resolution, account change, worker-token change and epoch transition, newest first.</p>
      {page.items.length === 0 ? (
        <p>Nothing recorded yet.</p>
      ) : (
        <table>
          <caption className="visually-hidden">Audit entries</caption>
          <thead>
            <tr>
              <th scope="col">When (database clock)</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
              <th scope="col">Subject</th>
              <th scope="col">Before</th>
              <th scope="col">After</th>
            </tr>
          </thead>
          <tbody>
            {page.items.map((entry) => (
              <tr key={entry.id}>
                <td>{entry.at}</td>
                <td>{entry.actor}</td>
                <td>{entry.action}</td>
                <td>
                  {entry.subjectType} <code>{entry.subjectId}</code>
                </td>
                <td>
                  <code>{show(entry.before)}</code>
                </td>
                <td>
                  <code>{show(entry.after)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {page.nextCursor && <a href={`/audit?before=${page.nextCursor}`}>Older entries</a>}
    </div>
  );
}

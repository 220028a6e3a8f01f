"use client";

import type { Route } from "next";
import { usePathname, useRouter } from "next/navigation";
import type { FormEvent } from "react";
import styles from "./engineer.module.css";

export type FilterField =
  | { name: string; label: string; type: "select"; options: readonly string[] }
  | { name: string; label: string; type: "text"; placeholder?: string }
  | { name: string; label: string; type: "datetime" };

/** Local datetime-input value for an ISO time, and back: the URL always carries ISO with offset. */
const toLocalInput = (iso: string | undefined) => {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

/**
 * Filters that live in the URL: submitting replaces the query string (and drops the cursor, so
 * the list starts again at its first page). Works with the keyboard alone; Enter submits.
 */
export function FilterForm({ fields, values, label }: { fields: readonly FilterField[]; values: Record<string, string>; label: string }) {
  const router = useRouter();
  const pathname = usePathname();

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const query = new URLSearchParams();
    for (const field of fields) {
      const raw = String(data.get(field.name) ?? "").trim();
      if (!raw) continue;
      query.set(field.name, field.type === "datetime" ? new Date(raw).toISOString() : raw);
    }
    const qs = query.toString();
    router.push(`${pathname}${qs ? `?${qs}` : ""}` as Route);
  }

  return (
    <form className={`card ${styles.filters}`} onSubmit={submit} aria-label={label} role="search">
      {fields.map((field) => (
        <div key={field.name}>
          <label htmlFor={`filter-${field.name}`}>{field.label}</label>
          {field.type === "select" ? (
            <select id={`filter-${field.name}`} name={field.name} defaultValue={values[field.name] ?? ""}>
              <option value="">any</option>
              {field.options.map((option) => (
                <option key={option} value={option}>
                  {option.replaceAll("_", " ")}
                </option>
              ))}
            </select>
          ) : field.type === "datetime" ? (
            <input id={`filter-${field.name}`} name={field.name} type="datetime-local" defaultValue={toLocalInput(values[field.name])} />
          ) : (
            <input id={`filter-${field.name}`} name={field.name} type="text" defaultValue={values[field.name] ?? ""} placeholder={field.placeholder} />
          )}
        </div>
      ))}
      <div className={styles.filterActions}>
        <button type="submit" className="primary">
          Apply filters
        </button>
        <a className="button" href={pathname}>
          Clear
        </a>
      </div>
    </form>
  );
}

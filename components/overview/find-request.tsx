"use client";

import type { Route } from "next";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Straight to a request's page from its id, or to the requests whose id starts with what a
 * customer quotes (their reference FL-XXXX-XXXX is the id's first eight hex digits).
 */
export function FindRequest() {
  const router = useRouter();
  const [value, setValue] = useState("");
  function submit(event: FormEvent) {
    event.preventDefault();
    const text = value.trim();
    if (UUID.test(text)) return router.push(`/requests/${text.toLowerCase()}` as Route);
    const prefix = text.replace(/^FL-?/i, "").replaceAll("-", "").toLowerCase();
    router.push(`/requests?q=${encodeURIComponent(prefix)}` as Route);
  }
  return (
    <form onSubmit={submit} className="row" role="search" aria-label="Find a request">
      <label htmlFor="find-request">Request id or reference</label>
      <input id="find-request" value={value} onChange={(e) => setValue(e.target.value)} placeholder="FL-8C78-E694 or a request id" required />
      <button type="submit">Open</button>
    </form>
  );
}

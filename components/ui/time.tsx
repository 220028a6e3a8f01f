"use client";

import { formatDistanceToNowStrict } from "date-fns";
import { useEffect, useState } from "react";

const absolute = new Intl.DateTimeFormat("en-GB", {
  year: "numeric",
  month: "short",
  day: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  timeZoneName: "short",
});

/**
 * A moment shown relative ("3 min ago") and absolute with its time zone. The relative part is
 * rendered after mount and refreshed, so server and client markup agree.
 */
export function Time({ value, precise = false }: { value: string | Date | null; precise?: boolean }) {
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 15_000);
    return () => clearInterval(timer);
  }, []);
  if (value === null) return <span className="muted">—</span>;
  const date = typeof value === "string" ? new Date(value) : value;
  const iso = date.toISOString();
  const exact = precise ? `${absolute.format(date)} (${iso.slice(11, 23)} UTC)` : absolute.format(date);
  return (
    <time dateTime={iso} title={iso}>
      {now === null ? exact : `${formatDistanceToNowStrict(date, { addSuffix: true })} · ${exact}`}
    </time>
  );
}

"use client";

import { formatDistanceToNowStrict } from "date-fns";
import { useEffect, useState } from "react";

/**
 * How long a case has been held ("for 12 minutes"), with the moment it was taken as its title.
 * The duration is rendered after mount and refreshed, so server and client markup agree.
 */
export function HeldFor({ since }: { since: string }) {
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 15_000);
    return () => clearInterval(timer);
  }, []);
  const date = new Date(since);
  return (
    <time dateTime={since} title={since}>
      {now === null ? `since ${since.slice(11, 16)} UTC` : `for ${formatDistanceToNowStrict(date)}`}
    </time>
  );
}

"use client";

import { RouteError } from "@/components/engineer/route-error";

export default function PageError({ error, retry }: { error: Error & { digest?: string }; retry: () => void }) {
  return <RouteError what="schedules" error={error} retry={retry} />;
}

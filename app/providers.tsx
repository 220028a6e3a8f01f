"use client";

import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { ThemeProvider } from "next-themes";
import { useState, type ReactNode } from "react";
import { Toaster } from "sonner";

/**
 * Client-side providers: React Query for client data and polling, themes, and toasts. The nonce
 * lets next-themes' inline script (it sets the theme before the first paint) pass the policy.
 */
export function Providers({ children, nonce }: { children: ReactNode; nonce: string | undefined }) {
  const [queryClient] = useState(
    () => new QueryClient({ defaultOptions: { queries: { staleTime: 1_000, refetchOnWindowFocus: true, retry: 1 } } }),
  );
  return (
    <ThemeProvider attribute="data-theme" defaultTheme="system" enableSystem nonce={nonce}>
      <QueryClientProvider client={queryClient}>
        {children}
        <Toaster richColors closeButton position="bottom-right" />
      </QueryClientProvider>
    </ThemeProvider>
  );
}

/**
 * The quickstart's own page: a customer follows their welcome card with `<RequestProgress>`
 * from `fenceline/react`, on this page's origin, reading Fenceline across origins. The tracking
 * token comes from the address (`?token=…`), Fenceline's URL from the page's meta tag.
 */
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { RequestProgress } from "fenceline/react";
import { createRoot } from "react-dom/client";

const fencelineUrl = document.querySelector<HTMLMetaElement>('meta[name="fenceline-url"]')!.content;
const token = new URLSearchParams(location.search).get("token");
const queryClient = new QueryClient();

function Page() {
  return (
    <main>
      <p className="eyebrow">Greeting cards</p>
      <h1>Your welcome card</h1>
      {token ? (
        <RequestProgress token={token} baseUrl={fencelineUrl} />
      ) : (
        <p>Open this page from the link `npm run request` prints: it carries your tracking token.</p>
      )}
    </main>
  );
}

createRoot(document.getElementById("root")!).render(
  <QueryClientProvider client={queryClient}>
    <Page />
  </QueryClientProvider>,
);

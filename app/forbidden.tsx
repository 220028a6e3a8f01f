/** Rendered with a 403 when a signed-in staff member opens a page their roles do not grant. */
export default function Forbidden() {
  return (
    <main id="main" className="stack">
      <h1>Not for your role</h1>
      <p>You are signed in, but none of your roles grants this page. Ask an admin if you need it.</p>
      <p>
        <a href="/">Back to the start page</a>
      </p>
    </main>
  );
}

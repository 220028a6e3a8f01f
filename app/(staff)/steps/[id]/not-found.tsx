import Link from "next/link";

export default function StepNotFound() {
  return (
    <div className="stack">
      <h1>No such step</h1>
      <p className="state">This step id is not in the database. It may be mistyped, or come from another environment.</p>
      <Link href="/requests">Back to requests</Link>
    </div>
  );
}

/** The landing page's statement of what Fenceline promises, kept in step with docs/how-it-works/README.md ("Guarantees"). */
const protectedByFencing = [
  "At most one current lease per step, judged by the database clock.",
  "A worker that lost its lease cannot write a checkpoint or a receipt; what it learned is kept as a late observation.",
  "Every completed step has exactly one receipt.",
  "Every expired lease is decided from evidence, never simply re-run.",
];

const atLeastOnce = [
  "A paused worker's own code may still run after its lease ended: fencing stops its writes, not its CPU.",
  "Destinations that neither check the fencing term nor deduplicate by request identity may see a repeat; those outcomes go to review instead of a retry.",
];

export function Guarantees() {
  return (
    <section aria-labelledby="guarantees-heading">
      <h2 id="guarantees-heading">Guarantees</h2>
      <h3>Protected by the fencing term</h3>
      <ul>
        {protectedByFencing.map((line) => (
          <li key={line}>{line}</li>
        ))}
      </ul>
      <h3>At least once</h3>
      <ul>
        {atLeastOnce.map((line) => (
          <li key={line}>{line}</li>
        ))}
      </ul>
    </section>
  );
}

import { Guarantees } from "@/components/guarantees";

export default function HomePage() {
  return (
    <main>
      <h1>Fenceline</h1>
      <p>
        Multi-step requests whose steps call external services, run on fallible workers, each completed step proven by a
        durable receipt. A lease says who may work now; only evidence says what happened.
      </p>
      <Guarantees />
    </main>
  );
}

import { Loading } from "@/components/ui/states";

export default function LoadingStep() {
  return <Loading what="the step's lease history and records" />;
}

import { Loading } from "@/components/ui/states";

export default function LoadingMetrics() {
  return <Loading what="metrics" />;
}

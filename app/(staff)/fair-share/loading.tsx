import { Loading } from "@/components/ui/states";

export default function LoadingFairShare() {
  return <Loading what="fair share" />;
}

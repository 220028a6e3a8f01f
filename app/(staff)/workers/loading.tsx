import { Loading } from "@/components/ui/states";

export default function LoadingWorkers() {
  return <Loading what="workers" />;
}

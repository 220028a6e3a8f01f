import { Loading } from "@/components/ui/states";

export default function LoadingRequests() {
  return <Loading what="requests" />;
}

import { Loading } from "@/components/ui/states";

export default function LoadingSchedules() {
  return <Loading what="schedules" />;
}

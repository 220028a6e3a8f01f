"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { toast } from "sonner";
import type { LabFaults } from "@/lib/api/contract/engineer/lab";
import { ErrorState, Loading } from "@/components/ui/states";
import { engineerKeys, getJson, sendJson } from "./api";
import styles from "./engineer.module.css";

type Settings = LabFaults["settings"];
type Profile = Settings["global"];
/** `global`, or one of the destination's kinds. */
type Target = string;

/** Form fields of one fault profile; empty means "not set". */
const FIELDS = [
  { name: "latencyMs", label: "Latency (ms)", hint: "added before handling" },
  { name: "jitterMs", label: "Jitter (ms)", hint: "uniform extra latency" },
  { name: "errorRate", label: "Error rate (0–1)", hint: "500 without effect" },
  { name: "rateLimitRate", label: "Rate-limit share (0–1)", hint: "429 without effect" },
  { name: "retryAfterMs", label: "Retry-After (ms)", hint: "with the rate limit" },
  { name: "dropResponseRate", label: "Drop-response share (0–1)", hint: "effect commits, answer lost" },
  { name: "lateResponseRate", label: "Late-response share (0–1)", hint: "effect commits, answer delayed" },
  { name: "lateDelayMs", label: "Late delay (ms)", hint: "with the late response" },
] as const;
type FieldName = (typeof FIELDS)[number]["name"];

function toFields(profile: Profile | undefined): Record<FieldName, string> {
  const s = (v: number | undefined) => (v === undefined ? "" : String(v));
  return {
    latencyMs: s(profile?.latency?.fixedMs),
    jitterMs: s(profile?.latency?.jitterMs),
    errorRate: s(profile?.errorRate),
    rateLimitRate: s(profile?.rateLimit?.rate),
    retryAfterMs: s(profile?.rateLimit?.retryAfterMs),
    dropResponseRate: s(profile?.dropResponseRate),
    lateResponseRate: s(profile?.lateResponse?.rate),
    lateDelayMs: s(profile?.lateResponse?.delayMs),
  };
}

function toProfile(fields: Record<FieldName, string>): Profile {
  const n = (v: string) => (v.trim() === "" ? undefined : Number(v));
  const profile: Profile = {};
  if (n(fields.latencyMs) !== undefined || n(fields.jitterMs) !== undefined) profile.latency = { fixedMs: n(fields.latencyMs) ?? 0, jitterMs: n(fields.jitterMs) ?? 0 };
  if (n(fields.errorRate) !== undefined) profile.errorRate = n(fields.errorRate);
  if (n(fields.rateLimitRate) !== undefined) profile.rateLimit = { rate: n(fields.rateLimitRate)!, retryAfterMs: n(fields.retryAfterMs) ?? 1_000 };
  if (n(fields.dropResponseRate) !== undefined) profile.dropResponseRate = n(fields.dropResponseRate);
  if (n(fields.lateResponseRate) !== undefined) profile.lateResponse = { rate: n(fields.lateResponseRate)!, delayMs: n(fields.lateDelayMs) ?? 0 };
  return profile;
}

function ProfileForm({ settings, destinations }: { settings: Settings; destinations: readonly string[] }) {
  const queryClient = useQueryClient();
  const [target, setTarget] = useState<Target>("global");
  const current = target === "global" ? settings.global : settings.kinds[target];
  const [fields, setFields] = useState(() => toFields(settings.global));

  const save = useMutation({
    mutationFn: (next: Settings) => sendJson<LabFaults>("/api/lab/faults", "PUT", next),
    onSuccess: (result) => {
      queryClient.setQueryData(engineerKeys.faults(), result);
      toast.success("Destination faults updated");
    },
    onError: (error) => toast.error(`Faults not changed: ${error instanceof Error ? error.message : String(error)}`),
  });

  function choose(next: Target) {
    setTarget(next);
    setFields(toFields(next === "global" ? settings.global : settings.kinds[next]));
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    const profile = toProfile(fields);
    const next: Settings =
      target === "global" ? { ...settings, global: profile } : { ...settings, kinds: { ...settings.kinds, [target]: profile } };
    save.mutate(next);
  }

  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="fault-form-title">
      <h3 id="fault-form-title">Switch faults</h3>
      <div className="row">
        <div>
          <label htmlFor="fault-target">Applies to</label>
          <select id="fault-target" value={target} onChange={(e) => choose(e.target.value as Target)}>
            {["global", ...destinations].map((t) => (
              <option key={t} value={t}>
                {t === "global" ? "every destination (global)" : `${t} destination`}
              </option>
            ))}
          </select>
        </div>
        <p className="muted" style={{ margin: 0 }}>
          A destination&apos;s own fields override the global ones field by field. Now: <code>{JSON.stringify(current ?? {})}</code>
        </p>
      </div>
      <div className={styles.labGrid}>
        {FIELDS.map((field) => (
          <div key={field.name}>
            <label htmlFor={`fault-${field.name}`}>{field.label}</label>
            <input
              id={`fault-${field.name}`}
              inputMode="decimal"
              value={fields[field.name]}
              onChange={(e) => setFields({ ...fields, [field.name]: e.target.value })}
              aria-describedby={`fault-${field.name}-hint`}
            />
            <div id={`fault-${field.name}-hint`} className="muted" style={{ fontSize: "0.8rem" }}>
              {field.hint}
            </div>
          </div>
        ))}
      </div>
      <div className="row">
        <button type="submit" className="primary" disabled={save.isPending}>
          {save.isPending ? "Saving…" : "Apply faults"}
        </button>
        <button type="button" disabled={save.isPending} onClick={() => save.mutate({ seed: settings.seed, global: {}, kinds: {} })}>
          Clear all faults
        </button>
      </div>
    </form>
  );
}

/** Demo mode only: the destination service's faults, read and switched through /api/lab/faults. */
export function FaultLab() {
  const { data, error, isPending } = useQuery({ queryKey: engineerKeys.faults(), queryFn: () => getJson<LabFaults>("/api/lab/faults"), refetchInterval: 10_000 });
  return (
    <section aria-labelledby="fault-lab" className="stack">
      <h2 id="fault-lab">Fault lab</h2>
      <p className="muted">
        Pause (SIGSTOP), resume (SIGCONT) or kill (SIGKILL) a worker above; switch the destination service&apos;s faults here.
        {data ? (
          <>
            {" "}
            Destination: <code>{data.destinationUrl}</code>
          </>
        ) : null}
      </p>
      {isPending ? <Loading what="the destination's faults" /> : error ? <ErrorState what="the destination's faults" error={error} /> : <ProfileForm key={JSON.stringify(data.settings)} settings={data.settings} destinations={data.destinations} />}
    </section>
  );
}

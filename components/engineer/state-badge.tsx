/** Step and request states as badges: colour, a symbol and the word, never colour alone. */
const tones: Record<string, { tone: "ok" | "warn" | "bad" | "info" | ""; symbol: string }> = {
  completed: { tone: "ok", symbol: "✓" },
  completed_without_effect: { tone: "ok", symbol: "✓" },
  leased: { tone: "info", symbol: "▶" },
  ready: { tone: "", symbol: "○" },
  blocked: { tone: "", symbol: "…" },
  active: { tone: "info", symbol: "▶" },
  indeterminate: { tone: "warn", symbol: "?" },
  superseded: { tone: "", symbol: "↷" },
  cancelled: { tone: "", symbol: "■" },
  rejected: { tone: "bad", symbol: "✕" },
  failed: { tone: "bad", symbol: "✕" },
};

export function StateBadge({ state }: { state: string }) {
  const { tone, symbol } = tones[state] ?? { tone: "", symbol: "•" };
  return (
    <span className={`badge ${tone}`}>
      <span aria-hidden="true">{symbol} </span>
      {state.replaceAll("_", " ")}
    </span>
  );
}

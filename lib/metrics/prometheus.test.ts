/**
 * The exposition is valid Prometheus text format 0.0.4: HELP and TYPE before each family's
 * samples, escaped label values and help text, counters ending in _total, a missing statistic
 * left out rather than invented, and a newline at the end.
 */
import { describe, expect, test } from "vitest";
import { METRICS, type MetricDefinition } from "./definitions";
import { metricName, renderExposition } from "./prometheus";

const SAMPLE = /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*"(,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*")*\})? (-?[0-9.e+-]+|NaN|[+-]Inf)$/;

describe("prometheus exposition", () => {
  test("every line is a HELP, a TYPE or a well-formed sample, and the text ends with a newline", () => {
    const text = renderExposition(new Map());
    expect(text.endsWith("\n")).toBe(true);
    for (const line of text.trimEnd().split("\n")) {
      if (line.startsWith("# HELP ") || line.startsWith("# TYPE ")) continue;
      expect(line).toMatch(SAMPLE);
    }
    // Every metric declares its type once, and counts are counters named *_total.
    for (const metric of METRICS) {
      const name = metricName(metric);
      expect(text.match(new RegExp(`^# TYPE ${name} `, "gm"))).toHaveLength(1);
      if (metric.kind === "count") expect(name).toMatch(/_total$/);
      expect(name.startsWith(`fenceline_${metric.family}_`)).toBe(true);
    }
  });

  test("escapes label values and help text, and omits a statistic with no events", () => {
    const metric: MetricDefinition = {
      id: "odd",
      family: "uncertainty",
      title: "Odd",
      unit: "things",
      kind: "count",
      definition: 'a "quoted" \\ back\nslash',
      keys: ['a"b\\c\nd'],
      label: "reason",
      statement: { name: "unused", text: "" },
      list: null,
    };
    const durations: MetricDefinition = { ...metric, id: "wait", kind: "seconds", keys: ["p50", "p95"], label: "stat" };
    const text = renderExposition(new Map([["odd", new Map([['a"b\\c\nd', 2]])], ["wait", new Map([["p50", 1.5], ["p95", null]])]]), [metric, durations]);
    expect(text).toBe(
      [
        '# HELP fenceline_uncertainty_odd_total Odd (things). a "quoted" \\\\ back\\nslash',
        "# TYPE fenceline_uncertainty_odd_total counter",
        'fenceline_uncertainty_odd_total{reason="a\\"b\\\\c\\nd"} 2',
        '# HELP fenceline_uncertainty_wait_seconds Odd (things). a "quoted" \\\\ back\\nslash',
        "# TYPE fenceline_uncertainty_wait_seconds gauge",
        'fenceline_uncertainty_wait_seconds{stat="p50"} 1.5',
        "",
      ].join("\n"),
    );
  });
});

"use client";

import { useTheme } from "next-themes";
import { useEffect, useState } from "react";

/** Light, dark, or the system's choice. */
export function ThemeToggle() {
  const { theme, setTheme } = useTheme();
  const [mounted, setMounted] = useState(false);
  useEffect(() => setMounted(true), []);
  return (
    <label className="row" style={{ fontWeight: 400, margin: 0 }}>
      <span className="visually-hidden">Theme</span>
      <select aria-label="Theme" value={mounted ? (theme ?? "system") : "system"} onChange={(event) => setTheme(event.target.value)}>
        <option value="system">System theme</option>
        <option value="light">Light</option>
        <option value="dark">Dark</option>
      </select>
    </label>
  );
}

/**
 * Waits `ms`, or rejects with the signal's reason as soon as it aborts: how the test and bench
 * workflows "work" for a while yet stop at once when their attempt's signal (`ctx.signal`) ends it.
 */
export const abortableSleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

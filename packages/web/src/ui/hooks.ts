import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError } from "../api.ts";

export type Resource<T> = {
  data: T | undefined;
  error: ApiError | null;
  reload: () => void;
};

const asApiError = (err: unknown): ApiError =>
  err instanceof ApiError ? err : new ApiError(0, { type: "api_error", message: String(err) });

/**
 * Loads `load()` and keeps it fresh: again when `deps` change, and every `pollMs` while the
 * tab is visible (status updates without reloading the page). One request at a time: a poll
 * is skipped while the last one has not answered, and a request made stale (new `deps`, a
 * reload, the view gone) is aborted through the signal handed to `load` and its answer
 * ignored. A failed refresh keeps the last good data and shows the error beside it; an
 * unchanged answer does not re-render.
 */
export function useResource<T>(
  load: (signal: AbortSignal) => Promise<T>,
  deps: unknown[],
  pollMs?: number,
): Resource<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | null>(null);
  const latest = useRef(load);
  latest.current = load;
  const inFlight = useRef<AbortController | null>(null);
  const lastAnswer = useRef<string | undefined>(undefined);
  // The caller's deps decide when `load` means something new (they are plain values: ids, filters).
  const key = JSON.stringify(deps);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` stands for the caller's deps.
  const run = useCallback(() => {
    inFlight.current?.abort();
    const controller = new AbortController();
    inFlight.current = controller;
    latest.current(controller.signal).then(
      (value) => {
        if (controller.signal.aborted) return;
        inFlight.current = null;
        setError(null);
        const answer = safeJson(value);
        if (answer !== undefined && answer === lastAnswer.current) return;
        lastAnswer.current = answer;
        setData(value);
      },
      (err: unknown) => {
        if (controller.signal.aborted) return;
        inFlight.current = null;
        setError(asApiError(err));
      },
    );
  }, [key]);
  useEffect(() => {
    lastAnswer.current = undefined;
    setData(undefined);
    setError(null);
    run();
    return () => {
      inFlight.current?.abort();
      inFlight.current = null;
    };
  }, [run]);
  useEffect(() => {
    if (!pollMs) return;
    const refresh = () => {
      if (document.visibilityState === "visible" && !inFlight.current) run();
    };
    const timer = setInterval(refresh, pollMs);
    // Back in a hidden tab: refresh at once rather than at the next tick.
    document.addEventListener("visibilitychange", refresh);
    return () => {
      clearInterval(timer);
      document.removeEventListener("visibilitychange", refresh);
    };
  }, [run, pollMs]);
  return { data, error, reload: run };
}

/** The answer as text, to notice an unchanged one; undefined when it cannot be (never equal). */
function safeJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/** For a form's submit or a button's action: tracks the call in flight and its error. */
export function useAction<A extends unknown[], T>(action: (...args: A) => Promise<T>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const run = useCallback(
    async (...args: A): Promise<T | undefined> => {
      setBusy(true);
      setError(null);
      try {
        return await action(...args);
      } catch (err) {
        setError(asApiError(err));
        return undefined;
      } finally {
        setBusy(false);
      }
    },
    [action],
  );
  return { run, busy, error, clearError: () => setError(null) };
}

import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError } from "../api.ts";

export type Resource<T> = {
  data: T | undefined;
  error: ApiError | null;
  loading: boolean;
  reload: () => void;
};

/**
 * Loads `load()` and keeps it fresh: again when `deps` change, and every `pollMs` while the
 * tab is visible (status updates without reloading the page). A failed refresh keeps the
 * last good data and shows the error beside it.
 */
export function useResource<T>(load: () => Promise<T>, deps: unknown[], pollMs?: number): Resource<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const latest = useRef(load);
  latest.current = load;
  // The caller's deps decide when `load` means something new (they are plain values: ids, filters).
  const key = JSON.stringify(deps);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` stands for the caller's deps.
  const run = useCallback(() => {
    const mine = ++generation.current;
    setLoading(true);
    latest.current().then(
      (value) => {
        if (mine !== generation.current) return;
        setData(value);
        setError(null);
        setLoading(false);
      },
      (err: unknown) => {
        if (mine !== generation.current) return;
        setError(
          err instanceof ApiError ? err : new ApiError(0, { type: "api_error", message: String(err) }),
        );
        setLoading(false);
      },
    );
  }, [key]);
  useEffect(() => {
    setData(undefined);
    run();
  }, [run]);
  useEffect(() => {
    if (!pollMs) return;
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") run();
    }, pollMs);
    return () => clearInterval(timer);
  }, [run, pollMs]);
  return { data, error, loading, reload: run };
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
        setError(
          err instanceof ApiError ? err : new ApiError(0, { type: "api_error", message: String(err) }),
        );
        return undefined;
      } finally {
        setBusy(false);
      }
    },
    [action],
  );
  return { run, busy, error, clearError: () => setError(null) };
}

import { type AnchorHTMLAttributes, type MouseEvent, useEffect, useState } from "react";

/** A small history-based router: each view has a real path, so links, reloads and Back work. */
const listeners = new Set<() => void>();

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  for (const l of listeners) l();
}

export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const update = () => setTick((n) => n + 1);
    listeners.add(update);
    window.addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      window.removeEventListener("popstate", update);
    };
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

/** Sets some query parameters of the current path (an empty value removes one), replacing the entry. */
export function setQuery(changes: Record<string, string | undefined>): void {
  const query = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(changes)) {
    if (v) query.set(k, v);
    else query.delete(k);
  }
  const qs = query.toString();
  navigate(qs ? `${location.pathname}?${qs}` : location.pathname, true);
}

/**
 * Matches `/portal/endpoints/:id` style patterns; returns the named parts or null. A part that
 * is not valid percent-encoding (`/portal/events/%E0`) matches nothing: the view says not found.
 */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split("/").filter(Boolean);
  const s = path.split("/").filter(Boolean);
  if (p.length !== s.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    const part = p[i]!;
    if (part.startsWith(":")) {
      const value = decodePart(s[i]!);
      if (value === null) return null;
      out[part.slice(1)] = value;
    } else if (part !== s[i]) return null;
  }
  return out;
}

function decodePart(part: string): string | null {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}

export function Link({ href, onClick, ...rest }: AnchorHTMLAttributes<HTMLAnchorElement> & { href: string }) {
  const click = (e: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(href);
  };
  return <a href={href} onClick={click} {...rest} />;
}

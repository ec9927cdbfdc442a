import { useEffect, useRef } from "react";

/**
 * After moving to another view (not on the first load), focus goes to the main region, so
 * keyboard and screen reader users start at the new content. `view` names the view shown: a
 * path, or a part of it when moves within a view should leave focus where it is.
 */
export function useFocusOnChange(view: string): void {
  const first = useRef(true);
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs on each change of view.
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    document.getElementById("main")?.focus();
  }, [view]);
}

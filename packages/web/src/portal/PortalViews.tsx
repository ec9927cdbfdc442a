import { useAppScope } from "../appScope.tsx";
import { match, useLocation } from "../router.tsx";
import type { NavItem } from "../ui/Layout.tsx";
import { Empty } from "../ui/Notice.tsx";

export function portalNav(base: string): NavItem[] {
  return [
    { href: base, label: "Endpoints" },
    { href: `${base}/catalog`, label: "Event catalog" },
    { href: `${base}/events`, label: "Events" },
  ];
}

/** Every portal view of one app, by path under the scope's base. */
export function PortalViews() {
  const { base } = useAppScope();
  const { path } = useLocation();
  const rest = path.slice(base.length) || "/";
  if (match("/", rest)) return <Empty title="Endpoints">Coming next.</Empty>;
  return <Empty title="Not found">There is nothing at this address.</Empty>;
}

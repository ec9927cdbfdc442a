import type { ReactNode } from "react";
import { useAppScope } from "../appScope.tsx";
import { match, useLocation } from "../router.tsx";
import type { NavItem } from "../ui/Layout.tsx";
import { Empty } from "../ui/Notice.tsx";
import { useFocusOnChange } from "../ui/useFocusOnChange.ts";
import { AttemptDetail } from "./AttemptDetail.tsx";
import { Catalog } from "./Catalog.tsx";
import { paths } from "./data.ts";
import { EndpointDetail } from "./EndpointDetail.tsx";
import { EndpointForm } from "./EndpointForm.tsx";
import { EndpointsList } from "./EndpointsList.tsx";
import { EventDetail } from "./EventDetail.tsx";
import { EventsList } from "./EventsList.tsx";

export function portalNav(base: string): NavItem[] {
  return [
    { href: paths.endpoints(base), label: "Endpoints" },
    { href: paths.catalog(base), label: "Event catalog" },
    { href: paths.events(base), label: "Events" },
  ];
}

/** Each view by its path under the base; `:id` is handed to the view (which remounts per id). */
const ROUTES: [string, (id: string) => ReactNode][] = [
  ["/", () => <EndpointsList />],
  ["/endpoints/new", () => <EndpointForm />],
  ["/endpoints/:id/edit", (id) => <EndpointForm id={id} key={id} />],
  ["/endpoints/:id", (id) => <EndpointDetail id={id} key={id} />],
  ["/catalog", () => <Catalog />],
  ["/events", () => <EventsList />],
  ["/events/:id", (id) => <EventDetail id={id} key={id} />],
  ["/attempts/:id", (id) => <AttemptDetail id={id} key={id} />],
];

/** Every portal view of one app, by path under the scope's base. */
export function PortalViews() {
  const { base } = useAppScope();
  const { path } = useLocation();
  const rest = path.slice(base.length) || "/";
  useFocusOnChange(path);

  for (const [pattern, view] of ROUTES) {
    const params = match(pattern, rest);
    if (params) return view(params.id ?? "");
  }
  return <Empty title="Not found">There is nothing at this address.</Empty>;
}

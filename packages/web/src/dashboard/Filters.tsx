import type { App } from "@herald/sdk/types";
import { FilterSelect } from "../ui/FilterSelect.tsx";

/**
 * The dashboard's app filter, in the URL query like every list filter. `apps` are the account's
 * newest (useApps); an app beyond them, named in the address, stays shown.
 */
export function AppFilter({
  apps,
  value,
  onChange,
}: {
  apps: App[] | undefined;
  value: string;
  onChange: (app: string) => void;
}) {
  const options = (apps ?? []).map((a) => ({ value: a.id, label: a.uid ? `${a.name} (${a.uid})` : a.name }));
  return <FilterSelect label="App" all="All apps" options={options} value={value} onChange={onChange} />;
}

import { Layout } from "../ui/Layout.tsx";
import { Empty } from "../ui/Notice.tsx";

export function DashboardPage() {
  return (
    <Layout product="Dashboard" nav={[{ href: "/dashboard", label: "Overview" }]}>
      <Empty title="Dashboard">Coming next.</Empty>
    </Layout>
  );
}

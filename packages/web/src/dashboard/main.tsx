import { configureApi } from "../api.ts";
import { mount } from "../mount.tsx";
import "../styles/dashboard.css";
import { DashboardPage } from "./DashboardPage.tsx";

configureApi({ page: "dashboard", useApiKey: true });
mount(<DashboardPage />);

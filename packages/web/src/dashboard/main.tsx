import { mount } from "../mount.tsx";
import "../styles/dashboard.css";
import { DashboardPage } from "./DashboardPage.tsx";

mount(<DashboardPage />);

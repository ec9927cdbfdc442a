import { mount } from "../mount.tsx";
import { DashboardPage } from "./DashboardPage.tsx";

mount(<DashboardPage />);

import { configureApi } from "../api.ts";
import { mount } from "../mount.tsx";
import { PortalPage } from "./PortalPage.tsx";

// The portal runs on its session cookie alone: it never sends the dashboard's API key.
configureApi({ page: "portal" });
mount(<PortalPage />);

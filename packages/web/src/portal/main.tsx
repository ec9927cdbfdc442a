import { mount } from "../mount.tsx";
import { PortalPage } from "./PortalPage.tsx";

mount(<PortalPage />);

import { type ReactNode, StrictMode } from "react";
import { createRoot } from "react-dom/client";
import "./styles/base.css";
import "./styles/portal.css";

export function mount(node: ReactNode): void {
  const root = document.getElementById("root");
  if (!root) throw new Error("#root is missing");
  createRoot(root).render(<StrictMode>{node}</StrictMode>);
}

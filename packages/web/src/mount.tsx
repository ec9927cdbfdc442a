import { Component, type ReactNode, StrictMode } from "react";
import { createRoot } from "react-dom/client";
import "./styles/base.css";
import "./styles/portal.css";

export function mount(node: ReactNode): void {
  const root = document.getElementById("root");
  if (!root) throw new Error("#root is missing");
  createRoot(root).render(
    <StrictMode>
      <ErrorBoundary>{node}</ErrorBoundary>
    </StrictMode>,
  );
}

/**
 * A view that throws leaves a message and a way on instead of a blank page (React logs the
 * error itself). Back or Forward tries the page again.
 */
class ErrorBoundary extends Component<{ children: ReactNode }, { failed: boolean }> {
  override state = { failed: false };
  static getDerivedStateFromError() {
    return { failed: true };
  }
  private retry = () => this.setState({ failed: false });
  override componentDidMount() {
    window.addEventListener("popstate", this.retry);
  }
  override componentWillUnmount() {
    window.removeEventListener("popstate", this.retry);
  }
  override render() {
    if (!this.state.failed) return this.props.children;
    return (
      <main id="main">
        <h1>Something went wrong</h1>
        <p role="alert">This page could not be shown. Reload it to try again.</p>
        <p>
          <button type="button" onClick={() => location.reload()}>
            Reload the page
          </button>
        </p>
      </main>
    );
  }
}

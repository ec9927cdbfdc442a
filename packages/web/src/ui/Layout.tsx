import type { ReactNode } from "react";
import { Link, useLocation } from "../router.tsx";

export type NavItem = { href: string; label: string };

/** The page frame: a skip link, the product bar with its navigation, and the main region. */
export function Layout({
  product,
  nav,
  aside,
  children,
}: {
  product: string;
  nav: NavItem[];
  aside?: ReactNode;
  children: ReactNode;
}) {
  const { path } = useLocation();
  const current = nav.reduce<NavItem | undefined>(
    (best, item) =>
      (path === item.href || path.startsWith(`${item.href}/`)) && item.href.length > (best?.href.length ?? 0)
        ? item
        : best,
    undefined,
  );
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">
          <span aria-hidden="true">◆</span> Herald <span className="brand-product">{product}</span>
        </span>
        <nav aria-label="Sections" className="topnav">
          {nav.map((item) => (
            <Link key={item.href} href={item.href} aria-current={item === current ? "page" : undefined}>
              {item.label}
            </Link>
          ))}
        </nav>
        {aside ? <div className="topbar-aside">{aside}</div> : null}
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}

export function PageHeader({ title, children }: { title: ReactNode; children?: ReactNode }) {
  return (
    <div className="page-header">
      <h1>{title}</h1>
      {children ? <div className="actions">{children}</div> : null}
    </div>
  );
}

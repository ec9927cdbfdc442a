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
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">
          <span aria-hidden="true">◆</span> Herald <span className="brand-product">{product}</span>
        </span>
        <NavLinks label="Sections" className="topnav" items={nav} />
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

/** Navigation links, the current one marked for screen readers (aria-current) and by style. */
export function NavLinks({
  label,
  className,
  items,
}: {
  label: string;
  className: string;
  items: NavItem[];
}) {
  const { path } = useLocation();
  const current = currentHref(items, path);
  return (
    <nav aria-label={label} className={className}>
      {items.map((item) => (
        <Link key={item.href} href={item.href} aria-current={item.href === current ? "page" : undefined}>
          {item.label}
        </Link>
      ))}
    </nav>
  );
}

/**
 * The item the path is in: the longest href that is the path or a folder of it, so
 * `/dashboard/apps/x` is under "Apps", not "Overview" at `/dashboard`.
 */
export function currentHref(items: NavItem[], path: string): string | undefined {
  let best: string | undefined;
  for (const { href } of items)
    if ((path === href || path.startsWith(`${href}/`)) && href.length > (best?.length ?? 0)) best = href;
  return best;
}

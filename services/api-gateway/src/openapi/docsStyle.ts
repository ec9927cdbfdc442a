/** The API reference's stylesheet, inlined into the page: no fonts or files from elsewhere. */
export const docsStyle = `
:root {
  color-scheme: light dark;
  --bg: #ffffff; --fg: #1b1f24; --muted: #57606a; --line: #d8dee4; --soft: #f6f8fa;
  --accent: #0b57d0; --code-bg: #eff2f5; --pre-bg: #161b22; --pre-fg: #e6edf3;
  --get-bg: #ddf4ff; --get-fg: #0a3069; --post-bg: #dafbe1; --post-fg: #116329;
  --delete-bg: #ffebe9; --delete-fg: #82071e; --req: #9a3412;
  --sans: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --fg: #e6edf3; --muted: #9da7b3; --line: #30363d; --soft: #161b22;
    --accent: #79b8ff; --code-bg: #262c36; --pre-bg: #010409; --pre-fg: #e6edf3;
    --get-bg: #0c2d6b; --get-fg: #cae8ff; --post-bg: #033a16; --post-fg: #aff5b4;
    --delete-bg: #67060c; --delete-fg: #ffdcd7; --req: #ffa657;
  }
}
* { box-sizing: border-box; }
html { scroll-padding-top: 1rem; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 16px/1.6 var(--sans); }
a { color: var(--accent); }
a:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
code, pre { font-family: var(--mono); font-size: 0.875em; }
code { background: var(--code-bg); padding: 0.1em 0.35em; border-radius: 4px; overflow-wrap: anywhere; }
pre { background: var(--pre-bg); color: var(--pre-fg); padding: 1rem; border-radius: 8px; overflow-x: auto;
  line-height: 1.5; }
pre code { background: none; padding: 0; font-size: 1em; overflow-wrap: normal; }
.skip { position: absolute; left: -999px; top: 0; background: var(--bg); padding: 0.5rem 1rem; }
.skip:focus { left: 1rem; z-index: 10; }
.layout { display: grid; grid-template-columns: 18rem minmax(0, 1fr); }
nav { position: sticky; top: 0; height: 100vh; overflow-y: auto; padding: 1.25rem 1rem 2rem;
  border-right: 1px solid var(--line); background: var(--soft); font-size: 0.9rem; }
.brand { display: block; font-weight: 700; font-size: 1.1rem; color: var(--fg); text-decoration: none;
  margin-bottom: 1rem; }
.brand span { color: var(--muted); font-weight: 400; }
.nav-group { margin: 1.25rem 0 0.25rem; font-size: 0.75rem; font-weight: 700; letter-spacing: 0.06em;
  text-transform: uppercase; color: var(--muted); }
.nav-group a { color: inherit; text-decoration: none; }
nav ul { list-style: none; margin: 0; padding: 0; }
nav li a { display: flex; gap: 0.5rem; align-items: baseline; padding: 0.2rem 0.4rem; border-radius: 4px;
  color: var(--fg); text-decoration: none; }
nav li a:hover { background: var(--code-bg); }
main { padding: 2rem clamp(1rem, 4vw, 3rem) 4rem; max-width: 58rem; }
h1 { font-size: 2rem; line-height: 1.2; margin: 0 0 0.5rem; }
h2 { font-size: 1.5rem; margin: 3rem 0 0.75rem; padding-top: 1rem; border-top: 1px solid var(--line); }
h3 { font-size: 1.2rem; margin: 2.5rem 0 0.5rem; }
h4 { font-size: 0.8rem; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted);
  margin: 1.25rem 0 0.4rem; }
.lead { font-size: 1.1rem; color: var(--muted); }
.op { border-top: 1px dashed var(--line); }
h2 + .op, .tag-intro + .op { border-top: 0; }
.route { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; margin: 0.25rem 0 0.75rem; }
.route code { font-size: 0.95rem; background: none; padding: 0; }
.method { display: inline-block; min-width: 3.6rem; text-align: center; font: 700 0.75rem/1.6 var(--mono);
  padding: 0.05rem 0.4rem; border-radius: 4px; }
nav .method { min-width: 3.2rem; font-size: 0.65rem; flex: none; }
.method-get { background: var(--get-bg); color: var(--get-fg); }
.method-post { background: var(--post-bg); color: var(--post-fg); }
.method-delete { background: var(--delete-bg); color: var(--delete-fg); }
.table-wrap { overflow-x: auto; margin: 0.5rem 0 1rem; }
table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
th, td { text-align: left; vertical-align: top; padding: 0.45rem 0.6rem; border-bottom: 1px solid var(--line); }
th { background: var(--soft); font-weight: 600; white-space: nowrap; }
td:first-child { white-space: nowrap; }
td:nth-child(2) { min-width: 8rem; }
.in, .note { display: block; color: var(--muted); font-size: 0.8rem; }
.req { color: var(--req); font-weight: 600; }
.optional { color: var(--muted); }
.statuses { display: flex; flex-wrap: wrap; gap: 0.4rem; list-style: none; padding: 0; margin: 0.25rem 0; }
.status { display: inline-block; font: 600 0.8rem/1.6 var(--mono); padding: 0 0.45rem; border-radius: 4px;
  border: 1px solid var(--line); text-decoration: none; }
.status-ok { background: var(--post-bg); color: var(--post-fg); border-color: transparent; }
.statuses .status { color: var(--fg); }
@media (max-width: 860px) {
  .layout { grid-template-columns: minmax(0, 1fr); }
  nav { position: static; height: auto; border-right: 0; border-bottom: 1px solid var(--line); }
  nav .groups { display: grid; grid-template-columns: repeat(auto-fill, minmax(15rem, 1fr)); gap: 0 1.5rem; }
  nav ul.compact { display: flex; flex-wrap: wrap; gap: 0.25rem 0.5rem; }
  nav ul.compact a { padding: 0.1rem 0.4rem; background: var(--code-bg); }
  h1 { font-size: 1.6rem; }
}
@media (max-width: 600px) {
  thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  tr { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.15rem 0.75rem; padding: 0.6rem 0;
    border-bottom: 1px solid var(--line); }
  td { display: block; padding: 0; border: 0; min-width: 0; }
  td:nth-child(2) { min-width: 0; }
  td:last-child:not(:first-child) { flex-basis: 100%; }
  .in { display: inline; margin-left: 0.4rem; }
}
`;

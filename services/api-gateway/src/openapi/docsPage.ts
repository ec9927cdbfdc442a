import type { OpenApiDocument } from "./document.ts";

export function renderDocsPage(doc: OpenApiDocument): string {
  return `<!doctype html><title>${String(doc.info.title)}</title>`;
}

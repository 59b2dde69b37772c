/** Links and headings of a markdown page, as GitHub renders them (pure: the spec reads the files). */

export interface MarkdownLink {
  /** 1-based line of the link. */
  line: number;
  target: string;
}

/** The page's lines outside fenced code blocks, with inline code blanked (links there are not links). */
function proseLines(markdown: string): { line: number; text: string; raw: string }[] {
  const out: { line: number; text: string; raw: string }[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, i) => {
    const marker = /^\s*(```+|~~~+)/.exec(text)?.[1];
    if (marker) {
      if (fence === undefined) fence = marker[0];
      else if (marker[0] === fence) fence = undefined;
      return;
    }
    if (fence === undefined)
      out.push({ line: i + 1, raw: text, text: text.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length)) });
  });
  return out;
}

/** Every inline link `[text](target)` and reference definition `[x]: target` outside code. */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { line, text } of proseLines(markdown)) {
    for (const match of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      links.push({ line, target: match[1] ?? '' });
    const definition = /^\s*\[[^\]]+\]:\s*(\S+)/.exec(text);
    if (definition) links.push({ line, target: definition[1] ?? '' });
  }
  return links;
}

/** GitHub's anchor for a heading text: lower case, punctuation dropped, spaces as hyphens. */
export function headingSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a page's headings get, duplicates numbered as GitHub does (`x`, `x-1`, `x-2`). */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { raw } of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw)?.[1];
    if (heading === undefined) continue;
    const slug = headingSlug(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/**
 * Next decodes each dynamic path segment with decodeURIComponent and answers a bare 500 when one
 * is not valid percent-encoded UTF-8 (`/track/abc%2`, `/api/review/%ED%A0%80`). proxy.ts asks
 * here first, so such a path is refused before any route sees it.
 */

const SHOWN_SEGMENT_CHARS = 64;

/** The first segment that does not decode, or undefined when every one does. */
export function unreadableSegment(pathname: string): string | undefined {
  for (const segment of pathname.split("/")) {
    try {
      decodeURIComponent(segment);
    } catch {
      return segment;
    }
  }
  return undefined;
}

/** Says which segment, shortened: the path may be as long as the server accepts. */
export function describeUnreadableSegment(segment: string): string {
  const shown = segment.length > SHOWN_SEGMENT_CHARS ? `${segment.slice(0, SHOWN_SEGMENT_CHARS)}…` : segment;
  return `the path segment "${shown}" is not valid percent-encoded UTF-8`;
}

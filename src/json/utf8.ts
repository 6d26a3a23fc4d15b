/**
 * Request bytes to text, with section 3's safe encoding: each maximal invalid UTF-8 subpart becomes
 * U+FFFD, exactly as the WHATWG decoder does (it is the WHATWG decoder). A leading BOM is dropped.
 */
const decoder = new TextDecoder('utf-8', { fatal: false });

export function decodeUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

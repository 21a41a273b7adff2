/**
 * The default of limits.pii_scan_bytes: the UTF-8 bytes of text the PII rules of a request may read. 8 MiB is twice
 * the text of a full one-million-token conversation (Claude Code's and Codex's largest), and a fresh body that size of
 * the densest digits takes a scan worker several seconds; past the budget a request is refused, never waved through.
 */
export const DEFAULT_PII_SCAN_BYTES = 8 * 1024 * 1024;

"""JSON helpers shared by matching, checking and redaction: nesting limits and RFC 6901 pointers."""

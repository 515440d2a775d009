"""Wire formats of response bodies: SSE, AWS event-stream, the events view, provider error
bodies, content codings undone incrementally."""

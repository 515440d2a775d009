"""What the cassette commands compute: inspection rows, diffs, edits and plots."""

"""The cassette: its data model, binary codec and records, validation, the text form."""

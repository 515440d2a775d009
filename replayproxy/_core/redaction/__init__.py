"""Redaction: secrets in headers and queries, and JSON body fields, kept out of cassettes."""

"""Reading SQL: statement splitting and syntax errors, dialects, idiom tags and data flow."""

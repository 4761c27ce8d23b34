"""A study's results: which judgments count, the one read of their ratings, the inputs
the pure statistics (`annotation.stats`) compute the results document from, the
per-annotator figures, and the document's schema, through which every reader reads it.

Nothing here writes: `annotation.services.results` stores the document, and this package
imports no service, so that selectors may read through it too.
"""

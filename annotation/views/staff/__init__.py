"""Staff pages, one module per screen: screening review, the annotator directory, study
dashboards, a study's members and the audit trail. Study managers and admins use them
all. Plain form posts work everywhere; htmx swaps the changed
fragment in place. Query strings and posts are read through the forms in `forms`."""

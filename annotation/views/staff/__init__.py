"""Staff pages, one module per screen: screening review, the annotator directory, study
dashboards, a study's members and the audit trail. Study managers use all but the audit
trail, which is for admins. Plain form posts work everywhere; htmx swaps the changed
fragment in place. Query strings and posts are read through the forms in `forms`."""

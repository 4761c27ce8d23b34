"""The people who use the platform, as Django groups and flags.

- admin / study manager: `is_staff` (admin pages, studies, screening);
- researcher: member of the `researchers` group (results, exports, API);
- annotator: any other signed-in account, once screened and approved.
"""

RESEARCHERS_GROUP = "researchers"


def is_researcher(user) -> bool:
    if not user.is_authenticated:
        return False
    return user.is_staff or user.groups.filter(name=RESEARCHERS_GROUP).exists()

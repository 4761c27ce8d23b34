from common.roles import is_admin, is_researcher, is_study_manager


def roles(request):
    """Which links the navigation shows; each is evaluated only when a template asks."""
    return {
        "researcher_nav": lambda: is_researcher(request.user),
        "staff_nav": lambda: is_study_manager(request.user),
        "admin_nav": lambda: is_admin(request.user),
    }

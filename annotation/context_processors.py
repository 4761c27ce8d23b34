from .roles import is_researcher


def roles(request):
    """Whether to show the researcher's links; evaluated only when a template asks."""
    return {"researcher_nav": lambda: is_researcher(request.user)}

from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from common.roles import is_researcher


class IsResearcher(BasePermission):
    """Researchers and staff only: everything under /api/v1/ is unblinded."""

    message = "Only researchers and staff may use the API."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return bool(request.user and is_researcher(request.user))
